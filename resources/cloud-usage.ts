import * as v from 'valibot'
import { defineResource, f } from '../runtime/define.ts'

export const CLOUDS = ['sales', 'service', 'marketing', 'commerce', 'experience', 'platform', 'analytics', 'field_service'] as const

export const cloudUsage = defineResource({
  name: 'cloudUsage',
  title: 'Cloud usage',
  description: 'Per-cloud adoption breakdown (licensed and active users, key objects) and an overall summary. No filter, sort or paging.',
  table: 'cloud_usages',
  kind: 'singleton',
  fields: {
    clouds: f.json(
      v.array(
        v.object({
          cloud: v.picklist(CLOUDS),
          adoptionPercent: v.number(),
          licensedUsers: v.number(),
          activeUsers: v.number(),
          keyObjects: v.array(v.object({ apiName: v.string(), recordCount: v.number() })),
        }),
      ),
    ),
    summary: f.json(
      v.object({ overallAdoptionPercent: v.number(), primaryCloud: v.nullable(v.picklist(CLOUDS)), unusedClouds: v.array(v.picklist(CLOUDS)) }),
    ),
  },
})
