/**
 * Which argv staged without --shell looks like shell text: judged by the
 * first word and by words that are nothing but shell syntax.
 */
import { describe, expect, it } from 'vitest';
import { shellSyntaxIn } from '../../src/cli/shell-syntax.js';

describe('shell syntax in an argv', () => {
  it.each([
    [['echo hi | tr a-z A-Z'], 'its first word holds spaces'],
    [['python train.py'], 'its first word holds spaces'],
    [['make&&make'], "it holds '&'"],
    [['$(which python)', 'x.py'], "it holds '$('"],
    [['echo', 'hi', '|', 'tr', 'a-z', 'A-Z'], "it holds '|'"],
    [['make', '&&', 'make', 'install'], "it holds '&&'"],
    [['echo', 'hi', '>', 'out.txt'], "it holds '>'"],
    [['sort', '<', 'in.txt'], "it holds '<'"],
    [['true', ';', 'false'], "it holds ';'"],
    [['echo', '$(date)'], "it holds '$(date)'"],
    [['echo', '`date`'], "it holds '`date`'"],
    [['CUDA_VISIBLE_DEVICES=1', 'python', 'x.py'], "it starts with the assignment 'CUDA_VISIBLE_DEVICES=1'"],
    [['cd', '/tmp'], "'cd' is a shell builtin"],
    [['source', 'env.sh'], "'source' is a shell builtin"],
  ])('%j looks like shell text: %s', (command, why) => {
    expect(shellSyntaxIn(command)).toBe(why);
  });

  it.each([
    [['python', 'train.py', '--lr', '0.1']],
    [['grep', '-E', 'a|b', 'file']],
    [['echo', 'a && b']],
    [['sh', '-c', 'echo hi | tr a-z A-Z']],
    [['find', '.', '-name', '*.tmp', '-exec', 'rm', '{}', ';']],
    [['env', 'A=1', 'make']],
    [['/bin/sh', '-c', 'true']],
  ])('%j is ordinary argv', (command) => {
    expect(shellSyntaxIn(command)).toBeUndefined();
  });
});
