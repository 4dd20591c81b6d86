import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: globals.node,
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // A command ends with its code through oclif's this.exit (src/exit-codes.ts): the process may be a test's.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-properties': ['error', { object: 'process', property: 'exitCode', message: 'end the command with this.exit(code) (src/exit-codes.ts)' }],
    },
  },
);
