-- Two replicas, one leader (issue 34). Every audit row carries the
-- leadership generation it was written under: the Kubernetes Lease's
-- leaseTransitions as the writing process acquired it (0 without ha), so
-- a reader sees whose rows are whose and that they never interleave.
-- leadership holds the generation of the process that owns the database
-- now; the audit insert copies it, so no caller passes it along.
ALTER TABLE audit ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
CREATE TABLE leadership (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL
);
INSERT INTO leadership (id, generation) VALUES (1, 0);
