/** A full page in the layout, with what the header says about this dashboard. */
import type { DashboardContext } from './context.js';
import { layout, type Html, type LayoutOptions } from './layout.js';

export function dashboardPage(context: DashboardContext, options: Omit<LayoutOptions, 'queues' | 'allowActions'>): Html {
  return layout({ ...options, queues: [...context.clients.keys()], allowActions: context.allowActions });
}
