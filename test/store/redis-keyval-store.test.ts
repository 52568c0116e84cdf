import { RedisServer } from '../helpers/redis-server.ts';
import { keyvalStoreContract } from './keyval-store.contract.ts';
import { redisHarness } from './redis-harness.ts';

let server: Promise<RedisServer> | undefined;
const started = () => {
  server ??= RedisServer.start();
  return server;
};

keyvalStoreContract(
  'redis standalone',
  redisHarness(
    async () => (await started()).url,
    async () => (await started()).stop(),
  ),
);
