import * as v from 'valibot'
import { defineResource, f } from '../runtime/core/define.ts'

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
      { description: 'Per product cloud (sales, service, marketing, …): adoption percent, licensed and active users, and its key objects with their record counts.' },
    ),
    summary: f.json(
      v.object({ overallAdoptionPercent: v.number(), primaryCloud: v.nullable(v.picklist(CLOUDS)), unusedClouds: v.array(v.picklist(CLOUDS)) }),
      { description: 'Overall adoption percent, the most used cloud (null when none is used) and the licensed clouds nobody uses.' },
    ),
  },
})
