/**
 * Who a connection is (Kafka's KafkaPrincipal): a type and a name, printed "User:alice". A
 * connection is `ANONYMOUS` (User:ANONYMOUS) until it authenticates: always on PLAINTEXT listeners,
 * and on SSL listeners without a client certificate. SASL sets the authenticated user's name;
 * an SSL client certificate sets the name `ssl.principal.mapping.rules` makes of its distinguished
 * name.
 */
export interface KafkaPrincipal {
  readonly principalType: string;
  readonly name: string;
}

export const USER_TYPE = 'User';

export const ANONYMOUS: KafkaPrincipal = { principalType: USER_TYPE, name: 'ANONYMOUS' };

export function userPrincipal(name: string): KafkaPrincipal {
  return { principalType: USER_TYPE, name };
}

/** "User:alice", as Kafka prints and parses principals (ACL principals, super.users). */
export function principalToString(p: KafkaPrincipal): string {
  return `${p.principalType}:${p.name}`;
}

/** Kafka's SecurityUtils.parseKafkaPrincipal: "Type:name" (the name may contain ':'); null if malformed. */
export function parseKafkaPrincipal(s: string): KafkaPrincipal | null {
  const i = s.indexOf(':');
  if (i <= 0 || i === s.length - 1) return null;
  return { principalType: s.slice(0, i), name: s.slice(i + 1) };
}
