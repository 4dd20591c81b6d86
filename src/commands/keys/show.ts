import { FitqLocalCommand } from '../../cli/base-command.js';
import { UsageError } from '../../errors.js';
import { quote } from '../../text/quote.js';
import { keyFilePath, publicKeyOf, readKeyFile } from '../../security/user-keys.js';

export default class KeysShow extends FitqLocalCommand {
  static override summary = 'Print the public key of your own key, as an admin registers it (fitq keys add).';
  static override examples = ['<%= config.bin %> keys show'];

  async run(): Promise<void> {
    await this.parse(KeysShow);
    const path = keyFilePath();
    const key = readKeyFile(path);
    if (key === undefined) throw new UsageError(`no key at ${quote(path)}: fitq keys init makes one`);
    this.log(publicKeyOf(key));
  }
}
