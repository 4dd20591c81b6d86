import { Flags } from '@oclif/core';
import { FitqLocalCommand } from '../../cli/base-command.js';
import { stagerOf } from '../../model/stager.js';
import { createKeyFile, KEY_FILE_ENV, keyFilePath } from '../../security/user-keys.js';

export default class KeysInit extends FitqLocalCommand {
  static override summary = 'Make your own key (Ed25519): every run you stage is then signed with it, and proven yours.';
  static override description =
    `The private key goes to ${'$XDG_CONFIG_HOME'}/fitq/id_ed25519.pem (~/.config), or the file ${KEY_FILE_ENV} names, readable by you only. ` +
    'It prints the public key, which an admin registers under your name (fitq keys add); workers started with --require-signed then run your runs, and no one else can pass a run off as yours.';
  static override flags = { force: Flags.boolean({ summary: 'Replace the key there is (runs it signed no longer match a registered key).' }) };
  static override examples = ['<%= config.bin %> keys init'];

  async run(): Promise<void> {
    const { flags } = await this.parse(KeysInit);
    const path = keyFilePath();
    const key = createKeyFile(path, flags.force);
    this.log(`Made your key: ${path} (readable by you only).`);
    this.log(`Public key: ${key}`);
    this.log(`An admin registers it: fitq keys add ${stagerOf().user} ${key}`);
  }
}
