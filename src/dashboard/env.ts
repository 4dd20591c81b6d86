/** Hono's environment for the dashboard's app (no per-request variables yet). */
export type DashboardEnv = { Variables: Record<string, never> };
