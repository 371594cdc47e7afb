"""Reads Parquet files with pyarrow (an independent reader) and prints what they hold as JSON.

Usage: parquet-inspect.py [--values] FILE...
Prints {"rows", "row_groups", "created_by", "columns": {name: {physical, logical, repetition, nulls, sum}}}
summed over the files (the schema of the first), and with --values each column's values in the
export's JS forms: dates 'YYYY-MM-DD', timestamps 'YYYY-MM-DDTHH:MM:SS.sssZ' (UTC).
Sums: strings the total UTF-8 bytes, booleans the count of true, dates days since 1970-01-01,
timestamps milliseconds since the epoch (as a string: they exceed a double's integers).
"""
import json
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def column_sum(arr):
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return int(pc.sum(pc.binary_length(arr)).as_py() or 0)
    if pa.types.is_boolean(t):
        return int(pc.sum(pc.cast(arr, pa.int64())).as_py() or 0)
    if pa.types.is_date32(t):
        return int(pc.sum(pc.cast(arr, pa.int32()).cast(pa.int64())).as_py() or 0)
    if pa.types.is_timestamp(t):
        to_ms = {'s': lambda v: v * 1000, 'ms': lambda v: v, 'us': lambda v: v // 1000, 'ns': lambda v: v // 1000000}[t.unit]
        return str(sum(to_ms(v) for v in pc.cast(arr, pa.int64()).to_pylist() if v is not None))
    value = pc.sum(arr).as_py()
    return value if value is not None else 0


def js_value(v, t):
    if v is None:
        return None
    if pa.types.is_date32(t):
        return v.isoformat()
    if pa.types.is_timestamp(t):
        return v.strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (v.microsecond // 1000)
    return v


def main(argv):
    values = '--values' in argv
    files = [a for a in argv if a != '--values']
    out = {'rows': 0, 'row_groups': 0, 'created_by': None, 'columns': {}}
    for path in files:
        f = pq.ParquetFile(path)
        if out['created_by'] is None:
            out['created_by'] = f.metadata.created_by
            for i, name in enumerate(f.schema_arrow.names):
                col = f.schema.column(i)
                out['columns'][name] = {
                    'physical': col.physical_type,
                    'logical': str(col.logical_type),
                    'repetition': 'OPTIONAL' if col.max_definition_level > 0 else 'REQUIRED',
                    'arrow': str(f.schema_arrow.field(name).type),
                    'nulls': 0,
                    'sum': 0,
                }
                if values:
                    out['columns'][name]['values'] = []
        out['row_groups'] += f.metadata.num_row_groups
        table = f.read()
        out['rows'] += table.num_rows
        for name in table.column_names:
            arr = table.column(name).combine_chunks()
            c = out['columns'][name]
            c['nulls'] += arr.null_count
            s = column_sum(arr)
            c['sum'] = str(int(c['sum']) + int(s)) if isinstance(s, str) else c['sum'] + s
            if values:
                c['values'] += [js_value(v, arr.type) for v in arr.to_pylist()]
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    main(sys.argv[1:])
