import { RedisClusterServers } from '../helpers/redis-server.ts';
import { storeContracts } from './contracts/index.ts';
import { redisHarness } from './redis-harness.ts';

let servers: Promise<RedisClusterServers> | undefined;
const started = () => {
  servers ??= RedisClusterServers.start();
  return servers;
};

storeContracts(
  'redis cluster (3 masters)',
  redisHarness(
    async () => (await started()).url,
    async () => (await started()).stop(),
  ),
);
