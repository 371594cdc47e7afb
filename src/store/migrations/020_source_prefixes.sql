-- 020: what a replayed file held when its lines were applied.
--
-- A replay resumes after the lines it applied before (source_positions); a file whose applied part
-- was edited since (a dead-lettered line fixed) would be skipped silently. `lines` and `sha256`
-- (of those lines' bytes, each followed by \n) let a re-run see that the part it skips is not what
-- it applied, and say so. Written after each committed batch: a row may lag its position, and
-- then checks a shorter prefix, never a wrong one.
CREATE TABLE source_prefixes (
  source  TEXT PRIMARY KEY,
  lines   INTEGER NOT NULL,
  sha256  TEXT NOT NULL
) WITHOUT ROWID;
