/** Chooses the quota implementation for a configuration. */
import type { Config } from '../config.ts'
import type { ServiceOptions } from '../service.ts'
import { noopQuota } from './noop.ts'

export function quotaFactory(_config: Config): NonNullable<ServiceOptions['quota']> {
  return () => noopQuota
}
