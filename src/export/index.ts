// Data out (for a warehouse): Parquet exports of a database. The CLI's `export` command calls exportData.
export { exportData, schemaDocument, type ExportOptions, type ExportProgress, type ExportResult } from './export';
export { DATASETS } from './datasets';
export { exportInThread, EXPORT_HEAP_MB } from './export-thread';
export { ExportError, MANIFEST_FILE, SCHEMA_FILE, type Manifest } from './manifest';
