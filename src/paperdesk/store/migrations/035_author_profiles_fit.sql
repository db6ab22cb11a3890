-- An incremental resolve reads (id, given names, size) of every profile in the blocks a
-- day touches (~200k of 455k at 1M records) to pick the few it compares with: an index
-- holding those columns answers that without visiting the rows. It starts with the
-- block, so it also serves every look-up the plain block index served.
CREATE INDEX author_profiles_fit ON author_profiles(block, givens, n_signatures, author_id);
DROP INDEX author_profiles_block;
