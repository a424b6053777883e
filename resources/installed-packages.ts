import { defineResource, f } from '../runtime/core/define.ts'

export const installedPackages = defineResource({
  name: 'installedPackages',
  title: 'Installed package',
  description: 'Managed and unmanaged packages installed in the org, with version, licence status and seat usage.',
  id: { field: 'id', param: 'installedPackageId', encoding: 'int' },
  fields: {
    id: f.int({ description: 'Record id, stable across scans of the org.' }),
    name: f.text({ description: 'Package name as shown in Installed Packages.' }),
    namespace: f.text({ nullable: true, description: 'Namespace prefix of the package; null for unmanaged packages without one.' }),
    publisher: f.text({ description: 'Publisher of the package.' }),
    versionName: f.text({ description: 'Installed version name.' }),
    versionNumber: f.text({ description: 'Installed version number (e.g. 2.14.3).' }),
    type: f.enum(['managed', 'unmanaged'], { description: 'managed (upgradable, code hidden) or unmanaged (editable copy).' }),
    installedDate: f.ts({ description: 'When the installed version was installed.' }),
    licenseStatus: f.text({ description: 'License state of the package (Active, Trial, Expired, Free, …).' }),
    seatsTotal: f.int({ nullable: true, description: 'Licensed seats; null for site-wide or free licenses.' }),
    seatsUsed: f.int({ nullable: true, description: 'Seats assigned; null for site-wide or free licenses.' }),
    expirationDate: f.date({ nullable: true, description: 'When the license expires; null when it does not.' }),
  },
  filterable: ['id', 'name', 'namespace', 'publisher', 'type', 'installedDate', 'licenseStatus', 'expirationDate'],
  sortable: ['id', 'name', 'namespace', 'publisher', 'installedDate', 'expirationDate'],
  groupable: ['type'],
  defaultSort: 'name',
})
