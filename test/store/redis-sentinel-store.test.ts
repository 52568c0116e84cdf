import { RedisSentinelServers } from '../helpers/redis-server.ts';
import { storeContracts } from './contracts/index.ts';
import { redisHarness } from './redis-harness.ts';

let servers: Promise<RedisSentinelServers> | undefined;
const started = () => {
  servers ??= RedisSentinelServers.start();
  return servers;
};

storeContracts(
  'redis sentinel',
  redisHarness(
    async () => (await started()).url,
    async () => (await started()).stop(),
  ),
);
