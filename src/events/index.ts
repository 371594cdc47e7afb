export * from './types.gen';
export { decodeEvent, type Decoded, type DeadLetterReason } from './decode';
export { eventSchemas, createAjv, readSchemaDir, describeErrors, SCHEMA_VERSION, type JsonSchema } from './schemas';
export { CATALOG_TYPES, isCatalogEvent, projectOfEvent } from './routing';
