/** nginx's scalar parsers, shared with the engine, which reads values of variables with them. */
export * from '../engine/scalar-values.ts';
