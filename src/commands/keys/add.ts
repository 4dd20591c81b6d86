import { Args, Flags } from '@oclif/core';
import { FitqCommand } from '../../cli/base-command.js';

export default class KeysAdd extends FitqCommand {
  static override summary = "Register a user's public key (as fitq keys init printed it): runs it signs are proven that user's.";
  static override description =
    'Replaces the key the user had. Workers started with --require-signed run only runs signed by the registered key of their user. ' +
    "A run its user signed is canceled, held, released, updated, restarted or removed only at a request signed by that user or an admin (--admin).";
  static override args = {
    user: Args.string({ description: 'The user name runs are staged under (FITQ_USER, else the OS user).', required: true }),
    key: Args.string({ description: 'The public key, ed25519:… .', required: true }),
  };
  static override flags = {
    admin: Flags.boolean({
      summary: "Make the user an admin: their signed requests may cancel, hold, release, restart and remove any user's signed runs (--no-admin: no longer).",
      allowNo: true,
    }),
  };
  static override examples = ['<%= config.bin %> keys add alice ed25519:Pq3…', '<%= config.bin %> keys add carol ed25519:Zx8… --admin'];

  async run(): Promise<void> {
    const { args, flags } = await this.parse(KeysAdd);
    const { replaced, admin } = await this.withClient(flags, (client) => client.addUserKey(args.user, args.key, flags.admin));
    this.log(`${replaced ? 'Replaced' : 'Registered'} the key of ${args.user}${admin ? ', an admin' : ''}.`);
  }
}
