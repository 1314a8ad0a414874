/**
 * ssl.principal.mapping.rules: the cases of Kafka's SslPrincipalMapperTest (valid and invalid rule
 * strings, how rule lists split, the mapping of sample names), plus Java replacement semantics.
 */
import { InvalidRuleError, NoMatchingRuleError, SslPrincipalMapper } from './principal-mapper';

test.each([
  'DEFAULT',
  'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/',
  'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT',
  'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/',
  'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L',
  'RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U',
  'RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/',
  'RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/',
])('valid rule %s', (rules) => {
  expect(() => new SslPrincipalMapper(rules)).not.toThrow();
});

test.each([
  'default',
  'DEFAUL',
  'DEFAULT/L',
  'DEFAULT/U',
  'RULE:CN=(.*?),OU=ServiceUsers.*/$1',
  'rule:^CN=(.*?),OU=ServiceUsers.*$/$1/',
  'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U',
  'RULE:^CN=(.*?),OU=ServiceUsers.*$/L',
  'RULE:^CN=(.*?),OU=ServiceUsers.*$/U',
  'RULE:^CN=(.*?),OU=ServiceUsers.*$/LU',
])('invalid rule %s', (rules) => {
  expect(() => new SslPrincipalMapper(rules)).toThrow(InvalidRuleError);
});

test('names mapped by a list of rules, first match wins', () => {
  const mapper = new SslPrincipalMapper(
    [
      'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L',
      'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L',
      'RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U',
      'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U',
      'DEFAULT',
    ].join(', '),
  );
  expect(mapper.getName('CN=Duke,OU=ServiceUsers,O=Org,C=US')).toBe('duke');
  expect(mapper.getName('CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US')).toBe('duke@sme');
  expect(mapper.getName('cn=duke,ou=sme,dc=mycp,dc=com')).toBe('DUKE@SME');
  expect(mapper.getName('cN=duke,OU=JavaSoft,O=Sun Microsystems')).toBe('DUKE');
  expect(mapper.getName('OU=JavaSoft,O=Sun Microsystems,C=US')).toBe('OU=JavaSoft,O=Sun Microsystems,C=US');
});

test.each([
  ['[]', ''],
  ['[DEFAULT]', 'DEFAULT'],
  ['[RULE:/]', 'RULE://'],
  ['[RULE:/.*]', 'RULE:/.*/'],
  ['[RULE:/.*/L]', 'RULE:/.*/L'],
  ['[RULE:/, DEFAULT]', 'RULE://,DEFAULT'],
  ['[RULE:/, DEFAULT]', '  RULE:// ,  DEFAULT  '],
  ['[RULE:   /     , DEFAULT]', '  RULE:   /     / ,  DEFAULT  '],
  ['[RULE:  /     /U, DEFAULT]', '  RULE:  /     /U   ,DEFAULT  '],
  ['[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]', '  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  '],
  // empty rules are ignored
  ['[]', ',   , , ,      , , ,   '],
  ['[RULE:/, DEFAULT]', ',,RULE://,,,DEFAULT,,'],
  ['[RULE: /   , DEFAULT]', ',  , RULE: /   /    ,,,   DEFAULT, ,   '],
  ['[RULE:   /  /U, DEFAULT]', '     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,'],
  // escape sequences
  [String.raw`[RULE:\/\\\(\)\n\t/\/\/]`, String.raw`RULE:\/\\\(\)\n\t/\/\//`],
  [String.raw`[RULE:\**\/+/*/L, RULE:\/*\**/**]`, String.raw`RULE:\**\/+/*/L,RULE:\/*\**/**/`],
  // rules rule
  [
    String.raw`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`,
    String.raw`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`,
  ],
])('rules split as %s', (expected, rules) => {
  expect(new SslPrincipalMapper(rules).toString()).toBe(`SslPrincipalMapper(rules = ${expected})`);
});

test('an escaped comma with whitespace inside a name', () => {
  const mapper = new SslPrincipalMapper(String.raw`RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`);
  expect(mapper.getName(String.raw`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`)).toBe(String.raw`Tkac\, Adam`);
});

test('no matching rule is an error naming the name and the rules', () => {
  const mapper = new SslPrincipalMapper('RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/');
  expect(() => mapper.getName('CN=client,OU=test,O=krill')).toThrow(NoMatchingRuleError);
  expect(() => mapper.getName('CN=client,OU=test,O=krill')).toThrow(
    'No rules apply to CN=client,OU=test,O=krill, rules [RULE:^CN=(.*?),OU=ServiceUsers.*$/$1]',
  );
  expect(new SslPrincipalMapper(null).getName('CN=a')).toBe('CN=a');
});

test('replacements follow Java: $n past the groups stays literal, digits join a group while they name one, \\ quotes', () => {
  // Two groups: $12 is group 1 then "2"; $3 names no group and is kept as "$3" (Kafka's escaping).
  expect(new SslPrincipalMapper('RULE:^CN=(.*?),OU=(.*?)$/$12-$2-$3/').getName('CN=a,OU=b')).toBe('a2-b-$3');
  // \$ is a literal dollar; a group that did not take part adds nothing.
  expect(new SslPrincipalMapper(String.raw`RULE:^CN=(x)?(.*)$/\$$1$2/`).getName('CN=abc')).toBe('$abc');
  // Every match is replaced (replaceAll), once the whole name matched.
  expect(new SslPrincipalMapper('RULE:[a-z]+/X/').getName('abc')).toBe('X');
  expect(new SslPrincipalMapper('RULE:(?i)^cn=([a-z]+)$/$1/U').getName('CN=Alice')).toBe('ALICE');
});
