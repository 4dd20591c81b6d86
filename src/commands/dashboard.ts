import { Flags } from '@oclif/core';
import { FitqCommand } from '../cli/base-command.js';
import { parsePort } from '../units/port.js';
import { checkExposure, TOKEN_ENV } from '../dashboard/auth.js';
import { createDashboardApp } from '../dashboard/app.js';
import { hostRule } from '../dashboard/host-check.js';
import { closeDashboardContext, createDashboardContext } from '../dashboard/context.js';
import { startDashboardServer } from '../dashboard/server.js';
import { oneLine } from '../text/quote.js';
import { DEFAULT_METRICS_SHAPES, MAX_METRICS_SHAPES, OTHER_SHAPES, parseMetricsShapes } from '../metrics/shape-series.js';

export default class Dashboard extends FitqCommand {
  static override summary = 'Serve a live web dashboard of namespaces: runs by status, workers with their capacity and GPUs, pools.';
  static override description = `Binds to 127.0.0.1 by default; any other --host requires --token (or ${TOKEN_ENV}), which every request and event stream must then carry: open the printed address with ?token=TOKEN once (kept in a cookie), or send "Authorization: Bearer TOKEN". Requests must name a loopback host, the --host address or an --allow-host name (a web page of another site could otherwise read it through a name of its own pointed at this machine). Read-only unless --allow-actions. Stops on Ctrl-C.`;
  static override examples = [
    '<%= config.bin %> dashboard',
    '<%= config.bin %> dashboard --queue default --queue gpu --port 8080',
    `${TOKEN_ENV}=s3cret <%= config.bin %> dashboard --host 0.0.0.0`,
  ];

  static override flags = {
    // Takes the place of the connection flags' --queue: several namespaces.
    queue: Flags.string({
      summary: 'Namespace to show; repeat for several, shown side by side (default: FITQ_QUEUE or "default").',
      helpGroup: 'CONNECTION',
      multiple: true,
    }),
    port: Flags.string({ summary: 'Port to listen on (0: any free port).', default: '7070' }),
    host: Flags.string({ summary: 'Address to listen on; anything but loopback requires --token.', default: '127.0.0.1' }),
    token: Flags.string({ summary: 'Token every request and event stream must carry (prefer the variable: a flag shows in ps).', env: TOKEN_ENV }),
    'allow-host': Flags.string({
      summary: 'Another name requests may reach the dashboard by (a reverse proxy\'s, a DNS name); repeatable. Loopback names and the --host address are always accepted, any other is refused.',
      multiple: true,
    }),
    'allow-actions': Flags.boolean({ summary: 'Offer actions (cancel, hold, release, restart, priority, drain), each confirmed; read-only without.' }),
    'metrics-shapes': Flags.string({
      summary: `Demand shapes with a fitq_staged_runs series of their own at /metrics, those with the most staged runs; the rest are summed as shape="${OTHER_SHAPES}" (0 to ${MAX_METRICS_SHAPES}).`,
      default: String(DEFAULT_METRICS_SHAPES),
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Dashboard);
    const port = parsePort('--port', flags.port);
    const metricsShapes = parseMetricsShapes('--metrics-shapes', flags['metrics-shapes']);
    checkExposure(flags.host, flags.token);
    const hosts = hostRule(flags.host, flags['allow-host'] ?? []);
    const onNote = (note: string) => process.stderr.write(`Warning: ${oneLine(note)}\n`);
    const connection = { ...this.connectionOptions({ ...flags, queue: undefined }), evictionCheck: 'warn' as const, onNote };
    const context = await createDashboardContext({ connection, queues: flags.queue ?? [], allowActions: flags['allow-actions'], token: flags.token, hosts, metricsShapes });
    let server;
    try {
      server = await startDashboardServer(createDashboardApp(context), { host: flags.host, port });
    } catch (error) {
      await closeDashboardContext(context);
      throw error;
    }
    const queues = [...context.clients.keys()].join(', ');
    this.log(`fitq dashboard on ${server.url}/ (${queues}; ${context.allowActions ? 'actions allowed' : 'read-only'}${context.token ? '; token required' : ''})`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
    await closeDashboardContext(context);
  }
}

