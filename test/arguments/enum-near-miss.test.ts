import { repairArguments } from '../../src/arguments';

// The near-miss rule pinned both ways. A hunt found "within Levenshtein 2 of exactly one value"
// turned values into their opposites on a side-effecting tool (deactivate -> activate, import ->
// export, unpublish -> publish): each pair below is refused, each typo still corrected.

const repairIn = (allowed: string[], sent: string) =>
  repairArguments({ choice: sent }, { type: 'object', properties: { choice: { type: 'string', enum: allowed } } });

test.each([
  ['deactivate', 'activate'],
  ['unsuspend', 'suspend'],
  ['undelete', 'delete'],
  ['import', 'export'],
  ['unpublish', 'publish'],
  ['unsubscribe', 'subscribe'],
  ['include', 'exclude'],
  ['increase', 'decrease'],
  ['decrypt', 'encrypt'],
  ['ingress', 'egress'],
  ['internal', 'external'],
  ['revoke', 'invoke'],
  ['unfreeze', 'freeze'],
  ['uninstall', 'install'],
  ['inflate', 'deflate'],
  ['attach', 'detach'],
  ['ascending', 'descending'],
  ['sort_ascending', 'sort_descending'],
  ['sortAscending', 'sortDescending'],
  ['min_price', 'max_price'],
  ['price_asc', 'price_desc'],
  ['restart', 'restore'],
  ['reject', 'redact'],
  ['tier2', 'tier1'],
  ['gpt4', 'gpt5'],
  ['DeActivate', 'activate'],
  ['sort_acs', 'sort_asc'],
  ['sortasc', 'sort_asc'],
  ['form', 'from'],
  // Symbols are meaning (found in a review: a value of symbols alone has no words, and was taken
  // for any other: `!=` became `=` on a side-effecting delete_rows).
  ['!=', '='],
  ['<>', '='],
  ['≤', '≥'],
  ['\u2039', '>'],
  ['', '*'],
  ['-1', '1'],
  ['C', 'C++'],
  ['UTC+5', 'UTC-5'],
  ['1.5', '1-5'],
  ['_draft', 'draft'],
])('refused: %s is not taken for %s', (sent, other) => {
  expect(repairIn([other, 'noop'], sent)).toEqual({ value: { choice: sent }, repairs: [], refused: [] });
});

test.each([
  ['cancle', 'cancel', 'two adjacent letters swapped'],
  ['pubilsh', 'publish', 'two adjacent letters swapped'],
  ['recieve', 'receive', 'two adjacent letters swapped'],
  ['activte', 'activate', 'a letter missing'],
  ['deleete', 'delete', 'a letter doubled'],
  ['delate', 'delete', 'a letter replaced'],
  ['metrc', 'metric', 'a letter missing'],
  ['Delete', 'delete', 'case only'],
  ['SUSPEND', 'suspend', 'case only'],
  ['sort-asc', 'sort_asc', 'another separator'],
  ['sortAsc', 'sort_asc', 'another separator'],
  ['sort_descnding', 'sort_descending', 'a letter missing in one word'],
  ['tier1_standrd', 'tier1_standard', 'a letter missing, the number the same'],
])('accepted: %s -> %s (%s)', (sent, meant, _what) => {
  expect(repairIn([meant, 'noop'], sent)).toEqual({ value: { choice: meant }, repairs: [`repaired /choice: "${sent}" -> "${meant}" (enum value corrected)`], refused: [] });
});

test('two typos, or one in each of two words, are refused (once accepted as 2 edits)', () => {
  for (const [sent, meant] of [['actvte', 'activate'], ['sotr_acs', 'sort_asc'], ['srot_descnding', 'sort_descending']]) {
    expect(repairIn([meant!, 'noop'], sent!).value).toEqual({ choice: sent });
  }
});

test('a typo as near two allowed values is still refused', () => {
  expect(repairIn(['publish', 'polish'], 'pulish').value).toEqual({ choice: 'pulish' });
});
