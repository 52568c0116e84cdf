/**
 * The zones a configuration declares, as the control plane serves them (`-c FILE`): keyval zones with
 * their type and timeout, limit_req and limit_conn zone names.
 */
import type { Config } from '../config/model.ts';
import type { KeyvalZoneInfo } from '../store/cluster-registry.ts';

export interface ConfiguredZones {
  readonly keyvalZones: KeyvalZoneInfo[];
  readonly limitReqZones: string[];
  readonly limitConnZones: string[];
}

export function zonesOfConfig(config: Config): ConfiguredZones {
  return {
    keyvalZones: config.http.keyvalZones.map((z) => ({
      name: z.name,
      type: z.type,
      timeoutMs: z.timeoutMs,
      sizeBytes: z.sizeBytes,
    })),
    limitReqZones: config.http.limitReqZones.map((z) => z.name),
    limitConnZones: config.http.limitConnZones.map((z) => z.name),
  };
}
