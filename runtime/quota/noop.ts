/** A quota service that counts nothing (used until a real one is configured, and by tools). */
import type { QuotaService } from './types.ts'

const FAR = '9999-12-31T00:00:00.000Z'
export const noopQuota: QuotaService = {
  charge: async () => ({ allowed: true, headers: {} }),
  state: async () => ({
    body: { daily: { limit: 0, remaining: 0, resetAt: FAR }, monthly: { limit: 0, remaining: 0, resetAt: FAR } },
    headers: {},
  }),
  close: async () => undefined,
}
