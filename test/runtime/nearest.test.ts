/** "Did you mean …?": the nearest allowed name, only when it is close, never a tie or the name itself. */
import { t } from '../helpers/file-test.ts'
import { didYouMean, nearestName } from '../../runtime/core/nearest.ts'

const fields = ['id', 'apiName', 'label', 'isCustom', 'percentPopulated', 'populatedCount', 'createdDate', 'lastModifiedDate']

t.test('a close name is suggested', async (t) => {
  t.equal(nearestName('apiname', fields), 'apiName', 'case only')
  t.equal(nearestName('apiNme', fields), 'apiName', 'a letter missing')
  t.equal(nearestName('lable', fields), 'label', 'two letters swapped')
  t.equal(nearestName('percentPopulatd', fields), 'percentPopulated')
  t.equal(nearestName('createdAt', fields), 'createdDate', 'two letters missing from a long name')
  t.equal(nearestName('ID', fields), 'id', 'a short name differing in case')
  t.equal(didYouMean('isCustm', fields), '; did you mean "isCustom"?')
})

t.test('nothing is suggested when no name is close, names tie, or the name is allowed itself', async (t) => {
  t.equal(nearestName('colour', fields), undefined)
  t.equal(nearestName('ix', fields), undefined, 'a short name is suggested only for a difference of case')
  t.equal(nearestName('modifiedBy', fields), undefined, 'too far from lastModifiedDate')
  t.equal(nearestName('ab', ['ac', 'ad']), undefined, 'a tie')
  t.equal(nearestName('id', ['id']), undefined)
  t.equal(nearestName('', fields), undefined)
  t.equal(nearestName('x'.repeat(65), ['x'.repeat(64)]), undefined, 'long input is not compared')
  t.equal(didYouMean('colour', fields), '')
})
