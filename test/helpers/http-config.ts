/**
 * An `http {}` body read as a whole configuration file (`events {}` added), for the config tests: the
 * result, or the error a load gives (`'loaded'` when there is none).
 */
import type { ConfigWarning } from '../../src/config/index.ts';
import { loadConfigText } from '../../src/config/index.ts';
import type { HttpConf } from '../../src/config/model.ts';

export function loadHttp(http: string, file: string, warnings?: ConfigWarning[]): HttpConf {
  return loadConfigText(`events {}\nhttp {\n${http}\n}\n`, file, {
    onWarning: (w) => warnings?.push(w),
  }).http;
}

export function httpLoadError(http: string, file: string): string {
  try {
    loadHttp(http, file);
  } catch (err) {
    return (err as Error).message;
  }
  return 'loaded';
}
