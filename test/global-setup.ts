import type { TestProject } from 'vitest/node';
import { startRedisServer, type RedisServer } from './support/redis-server.js';

let server: RedisServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  server = await startRedisServer();
  project.provide('redisUrl', server.url);
}

export async function teardown(): Promise<void> {
  await server?.dispose();
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}
