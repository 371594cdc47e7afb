-- 012: the trend's day points, rendered by the writer (cold builds over a year).
--
-- The year-long trend (/visibility/timeseries, one point per day) is ~486 KB of JSON for a busy
-- project: 365 points of ~10 metrics each with 5 engines inside. Reading its 1,825 engine-day rows,
-- computing the metrics and serializing the floats took ~6 ms of each cold build; the points as
-- text, read in day order and joined, ~1 ms. A past day's point changes only when its rows do, so
-- the writer renders it then, in the same transaction (src/store/trend-days.ts).
--
-- trend_days holds each (project, day) point that has counted runs on a known engine, as the
-- endpoint would serialize it (engines ordered by name: the engines table is part of the input).
-- trend_days_stale lists the days whose point may be wrong: the triggers below add a day whenever
-- its engine-day rows change, and every day of an engine whose name changes or that appears or goes.
-- The writer renders stale days at the end of each batch and empties the list; a reader uses the
-- points of a project only when none of its days is stale, and computes the body otherwise. So a
-- point never has to be right for a read to be right: what the triggers list is never served.

CREATE TABLE trend_days (
  project_id  TEXT NOT NULL,
  day         TEXT NOT NULL,
  point       TEXT NOT NULL,
  PRIMARY KEY (project_id, day)
) WITHOUT ROWID;

CREATE TABLE trend_days_stale (
  project_id  TEXT NOT NULL,
  day         TEXT NOT NULL,
  PRIMARY KEY (project_id, day)
) WITHOUT ROWID;

-- NOT EXISTS rather than INSERT OR IGNORE: inside a trigger, the outer statement's conflict rule
-- (the writer's upsert: ABORT) overrides the trigger's OR IGNORE.
CREATE TRIGGER trend_day_added AFTER INSERT ON agg_engine_day BEGIN
  INSERT INTO trend_days_stale (project_id, day) SELECT NEW.project_id, NEW.day
    WHERE NOT EXISTS (SELECT 1 FROM trend_days_stale s WHERE s.project_id = NEW.project_id AND s.day = NEW.day);
END;
-- An upsert's DO UPDATE fires this too. OLD as well as NEW: a row moved to another key (never done
-- today) leaves its old day stale as well.
CREATE TRIGGER trend_day_changed AFTER UPDATE ON agg_engine_day BEGIN
  INSERT INTO trend_days_stale (project_id, day) SELECT NEW.project_id, NEW.day
    WHERE NOT EXISTS (SELECT 1 FROM trend_days_stale s WHERE s.project_id = NEW.project_id AND s.day = NEW.day);
  INSERT INTO trend_days_stale (project_id, day) SELECT OLD.project_id, OLD.day
    WHERE NOT EXISTS (SELECT 1 FROM trend_days_stale s WHERE s.project_id = OLD.project_id AND s.day = OLD.day);
END;
CREATE TRIGGER trend_day_dropped AFTER DELETE ON agg_engine_day BEGIN
  INSERT INTO trend_days_stale (project_id, day) SELECT OLD.project_id, OLD.day
    WHERE NOT EXISTS (SELECT 1 FROM trend_days_stale s WHERE s.project_id = OLD.project_id AND s.day = OLD.day);
END;

-- A point lists its engines by name and leaves out rows of an unknown engine. Catalogue events are
-- rare; each such change scans agg_engine_day once (no index by engine: the readers never need one).
CREATE TRIGGER trend_engine_added AFTER INSERT ON engines BEGIN
  INSERT INTO trend_days_stale (project_id, day) SELECT DISTINCT a.project_id, a.day FROM agg_engine_day a
    WHERE a.engine_id = NEW.id
      AND NOT EXISTS (SELECT 1 FROM trend_days_stale s WHERE s.project_id = a.project_id AND s.day = a.day);
END;
CREATE TRIGGER trend_engine_renamed AFTER UPDATE OF id, name ON engines WHEN NEW.name IS NOT OLD.name OR NEW.id IS NOT OLD.id BEGIN
  INSERT INTO trend_days_stale (project_id, day) SELECT DISTINCT a.project_id, a.day FROM agg_engine_day a
    WHERE a.engine_id IN (NEW.id, OLD.id)
      AND NOT EXISTS (SELECT 1 FROM trend_days_stale s WHERE s.project_id = a.project_id AND s.day = a.day);
END;
CREATE TRIGGER trend_engine_dropped AFTER DELETE ON engines BEGIN
  INSERT INTO trend_days_stale (project_id, day) SELECT DISTINCT a.project_id, a.day FROM agg_engine_day a
    WHERE a.engine_id = OLD.id
      AND NOT EXISTS (SELECT 1 FROM trend_days_stale s WHERE s.project_id = a.project_id AND s.day = a.day);
END;

-- Every day of a database made before this migration: its writer renders them, a bounded number per
-- batch (RENDER_LIMIT in src/store/trend-days.ts), and until then the reads compute the body as before.
INSERT INTO trend_days_stale (project_id, day) SELECT DISTINCT project_id, day FROM agg_engine_day;
