import { defineResource, f } from '../runtime/define.ts'

export const installedPackages = defineResource({
  name: 'installedPackages',
  title: 'Installed package',
  description: 'Managed and unmanaged packages installed in the org, with version, licence status and seat usage.',
  id: { field: 'id', param: 'installedPackageId', encoding: 'int' },
  fields: {
    id: f.int(),
    name: f.text(),
    namespace: f.text({ nullable: true }),
    publisher: f.text(),
    versionName: f.text(),
    versionNumber: f.text(),
    type: f.enum(['managed', 'unmanaged']),
    installedDate: f.ts(),
    licenseStatus: f.text(),
    seatsTotal: f.int({ nullable: true }),
    seatsUsed: f.int({ nullable: true }),
    expirationDate: f.date({ nullable: true }),
  },
  filterable: ['id', 'name', 'namespace', 'publisher', 'type', 'installedDate', 'licenseStatus', 'expirationDate'],
  sortable: ['id', 'name', 'namespace', 'publisher', 'installedDate', 'expirationDate'],
  defaultSort: 'name',
})
