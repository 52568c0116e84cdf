import { RedisServer } from '../helpers/redis-server.ts';
import { storeContracts } from './contracts/index.ts';
import { redisHarness } from './redis-harness.ts';

let server: Promise<RedisServer> | undefined;
const started = () => {
  server ??= RedisServer.start();
  return server;
};

storeContracts(
  'redis standalone',
  redisHarness(
    async () => (await started()).url,
    async () => (await started()).stop(),
  ),
);
