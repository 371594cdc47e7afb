// The column model every export dataset is described in: the Parquet sink writes it, schema.json
// documents it. One source for both, so a column's type is never stated twice.

/**
 * A column's type and the JS value each row holds for it: string -> string; int32 / int64 -> number
 * (a safe integer); double -> number; boolean -> boolean; date -> 'YYYY-MM-DD' (Parquet DATE);
 * timestamp -> 'YYYY-MM-DDTHH:MM:SS.sssZ' (Parquet TIMESTAMP(MILLIS, isAdjustedToUTC=true)).
 * null only where the column is nullable.
 */
export type ColumnType = 'string' | 'int32' | 'int64' | 'double' | 'boolean' | 'date' | 'timestamp';

export interface ColumnSpec { name: string; type: ColumnType; nullable: boolean; description: string }

export interface DatasetSpec { name: string; description: string; columns: readonly ColumnSpec[] }

/** A value of a column, as the sink takes it (see ColumnType). */
export type ColumnValue = string | number | boolean | null;
