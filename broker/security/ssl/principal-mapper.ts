/**
 * `ssl.principal.mapping.rules`: how the distinguished name of a client certificate becomes the
 * name of a connection's principal on an SSL listener (Kafka's SslPrincipalMapper, KIP-371).
 *
 * Rules are a comma-separated list, tried in order; the first that applies gives the name:
 * - `DEFAULT`: the distinguished name itself (as Java's X500Principal.getName() prints it);
 * - `RULE:pattern/replacement/` with an optional `L` or `U` after the last slash: applies when the
 *   pattern (a regular expression) matches the whole name; the name is then every match of the
 *   pattern replaced by `replacement` ($1... refer to groups), lower- or upper-cased with L / U.
 *   `\` escapes a `/` or `,` inside the pattern or the replacement.
 *
 * Invariants: splitting and parsing accept and refuse exactly the rule strings Kafka does (the same
 * splitting expression, whitespace and empty entries ignored); a rule string that does not parse
 * throws InvalidRuleError at construction, so a bad config stops startup rather than a connection.
 * getName throws NoMatchingRuleError when no rule applies (Kafka then refuses the connection).
 * Patterns are Java regular expressions run as JavaScript ones: the common syntax (classes, groups,
 * lazy quantifiers, anchors) means the same; `(?i)` at the start becomes the `i` flag and `\A`,
 * `\z`, `\Z` become anchors. Replacement strings follow Java's Matcher rules (`\` quotes the next
 * character, `$n` takes as many digits as form a group number, `${name}`), including Kafka's
 * handling of a `$n` beyond the pattern's groups (kept literally).
 */

const RULE_PATTERN = String.raw`(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`;
const RULE_SPLITTER = new RegExp(String.raw`\s*(` + RULE_PATTERN + String.raw`)\s*(,\s*|$)`, 'g');
/** Java's Matcher.lookingAt: a match that starts at 0 (and may end anywhere). */
const RULE_PARSER = new RegExp('^(?:' + RULE_PATTERN + ')');
const BACK_REFERENCE = /\$(\d+)/g;

export class InvalidRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRuleError';
  }
}

export class NoMatchingRuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoMatchingRuleError';
  }
}

interface Rule {
  apply(dn: string): string | null;
  toString(): string;
}

const DEFAULT_RULE: Rule = { apply: (dn) => dn, toString: () => 'DEFAULT' };

/** A Java pattern as a JavaScript RegExp source and flags. */
function javaRegex(pattern: string): { source: string; flags: string } {
  let source = pattern;
  let flags = '';
  const inline = /^\(\?([imsx]+)\)/.exec(source);
  if (inline && !inline[1].includes('x')) {
    flags = inline[1];
    source = source.slice(inline[0].length);
  }
  source = source.replace(/(^|[^\\])((?:\\\\)*)\\A/g, '$1$2^').replace(/(^|[^\\])((?:\\\\)*)\\[zZ]/g, '$1$2$');
  return { source, flags };
}

function compile(pattern: string, flags: string): RegExp {
  try {
    return new RegExp(pattern, flags);
  } catch (err) {
    throw new InvalidRuleError(`Invalid rule pattern ${pattern}: ${(err as Error).message}`);
  }
}

/** Number of capturing groups of a pattern (Java's Matcher.groupCount). */
function groupCount(re: RegExp): number {
  return new RegExp(re.source + '|', re.flags).exec('')!.length - 1;
}

/** Kafka's escapeLiteralBackReferences: a `$n` naming no group (after dropping trailing digits) is made literal. */
function escapeLiteralBackReferences(unescaped: string, numGroups: number): string {
  if (numGroups === 0) return unescaped;
  let value = unescaped;
  // The positions come from the original string while `value` grows, exactly as in Kafka.
  for (const m of unescaped.matchAll(BACK_REFERENCE)) {
    const digits = m[1];
    if (digits.startsWith('0')) continue;
    let index = Number.parseInt(digits, 10);
    while (index > numGroups && index >= 10) index = Math.trunc(index / 10);
    if (index > numGroups) {
      const groupStart = m.index! + 1;
      value = value.slice(0, groupStart - 1) + '\\' + value.slice(groupStart - 1);
    }
  }
  return value;
}

/** Java's Matcher.appendReplacement for one match. */
function javaReplacement(replacement: string, match: RegExpMatchArray): string {
  const numGroups = match.length - 1;
  let out = '';
  let i = 0;
  while (i < replacement.length) {
    const c = replacement[i];
    if (c === '\\') {
      i++;
      if (i >= replacement.length) throw new InvalidRuleError('character to be escaped is missing');
      out += replacement[i++];
    } else if (c === '$') {
      i++;
      if (i >= replacement.length) throw new InvalidRuleError('Illegal group reference: group index is missing');
      if (replacement[i] === '{') {
        const end = replacement.indexOf('}', i);
        const name = end < 0 ? '' : replacement.slice(i + 1, end);
        if (end < 0 || !/^[a-zA-Z][a-zA-Z0-9]*$/.test(name)) throw new InvalidRuleError('named capturing group is missing trailing \'}\'');
        const g = match.groups?.[name];
        if (match.groups === undefined || !(name in match.groups)) throw new InvalidRuleError(`No group with name {${name}}`);
        if (g !== undefined) out += g;
        i = end + 1;
      } else {
        const first = replacement.charCodeAt(i) - 48;
        if (first < 0 || first > 9) throw new InvalidRuleError('Illegal group reference');
        let ref = first;
        i++;
        while (i < replacement.length) {
          const d = replacement.charCodeAt(i) - 48;
          if (d < 0 || d > 9) break;
          const next = ref * 10 + d;
          if (next > numGroups) break;
          ref = next;
          i++;
        }
        if (ref > numGroups) throw new InvalidRuleError(`No group ${ref}`);
        const g = match[ref];
        if (g !== undefined) out += g;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

class PatternRule implements Rule {
  private readonly whole: RegExp;
  private readonly global: RegExp;
  private readonly replacement: string;

  constructor(
    private readonly pattern: string,
    private readonly rawReplacement: string,
    private readonly toLowerCase: boolean,
    private readonly toUpperCase: boolean,
  ) {
    const { source, flags } = javaRegex(pattern);
    this.whole = compile(`^(?:${source})$`, flags);
    this.global = compile(source, flags + 'g');
    this.replacement = escapeLiteralBackReferences(rawReplacement, groupCount(this.global));
  }

  apply(dn: string): string | null {
    if (!this.whole.test(dn)) return null;
    let result = '';
    let last = 0;
    for (const m of dn.matchAll(this.global)) {
      result += dn.slice(last, m.index) + javaReplacement(this.replacement, m);
      last = m.index! + m[0].length;
    }
    result += dn.slice(last);
    // Java's Locale.ENGLISH case mapping: the locale-independent one.
    if (this.toLowerCase) return result.toLowerCase();
    if (this.toUpperCase) return result.toUpperCase();
    return result;
  }

  toString(): string {
    let s = `RULE:${this.pattern}/${this.rawReplacement}`;
    if (this.toLowerCase) s += '/L';
    else if (this.toUpperCase) s += '/U';
    return s;
  }
}

function splitRules(rules: string): string[] {
  const out: string[] = [];
  const s = rules.trim();
  RULE_SPLITTER.lastIndex = 0;
  for (;;) {
    const m = RULE_SPLITTER.exec(s);
    if (!m) break;
    out.push(m[1]);
    // Java's find() moves past an empty match; a JavaScript global regex would match it again.
    if (m[0].length === 0) RULE_SPLITTER.lastIndex++;
    if (RULE_SPLITTER.lastIndex > s.length) break;
  }
  return out;
}

function parseRule(rule: string): Rule | null {
  const m = RULE_PARSER.exec(rule);
  if (!m) throw new InvalidRuleError(`Invalid rule: ${rule}`);
  if (m[0].length !== rule.length) {
    throw new InvalidRuleError(`Invalid rule: \`${rule}\`, unmatched substring: \`${rule.slice(m[0].length)}\``);
  }
  if (m[1] !== undefined) return DEFAULT_RULE;
  if (m[2] !== undefined) return new PatternRule(m[2], m[4], m[6] === 'L', m[6] === 'U');
  return null; // an empty rule is ignored
}

export class SslPrincipalMapper {
  private readonly rules: Rule[];

  /** `rules` as `ssl.principal.mapping.rules` holds them; null means DEFAULT. Throws InvalidRuleError. */
  constructor(rules: string | null) {
    this.rules = [];
    for (const r of splitRules(rules ?? 'DEFAULT')) {
      const rule = parseRule(r);
      if (rule) this.rules.push(rule);
    }
  }

  /** The principal name for a distinguished name (RFC 2253 form); throws NoMatchingRuleError. */
  getName(distinguishedName: string): string {
    for (const r of this.rules) {
      const name = r.apply(distinguishedName);
      if (name !== null) return name;
    }
    throw new NoMatchingRuleError(`No rules apply to ${distinguishedName}, rules [${this.rules.join(', ')}]`);
  }

  toString(): string {
    return `SslPrincipalMapper(rules = [${this.rules.join(', ')}])`;
  }
}
