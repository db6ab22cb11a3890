-- Records that refer to another paper without being it (an erratum, a reply, a comment,
-- an extended abstract of it, another part of it): kept in their own works by the works
-- resolver and linked here by record key, so the link survives work renumbering. Derived:
-- a full works run empties and refills it.
CREATE TABLE work_related (
    from_key TEXT NOT NULL,
    to_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (from_key, to_key)
);
CREATE INDEX work_related_to ON work_related(to_key);
