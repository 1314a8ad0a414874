/**
 * What an encoder accepts: the decoded message type with every field optional, recursively.
 * Encoders fill a missing field with its schema default, so a handler writes only the fields
 * that matter for the version at hand. Decoders always return the complete type.
 */
export type Input<T> = T extends Buffer
  ? T
  : T extends string | number | bigint | boolean | null | undefined
    ? T
    : T extends readonly (infer U)[]
      ? Input<U>[]
      : { [K in keyof T]?: Input<T[K]> };
