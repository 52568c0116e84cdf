import { RedisSentinelServers } from '../helpers/redis-server.ts';
import { keyvalStoreContract } from './keyval-store.contract.ts';
import { redisHarness } from './redis-harness.ts';

let servers: Promise<RedisSentinelServers> | undefined;
const started = () => {
  servers ??= RedisSentinelServers.start();
  return servers;
};

keyvalStoreContract(
  'redis sentinel',
  redisHarness(
    async () => (await started()).url,
    async () => (await started()).stop(),
  ),
);
