"""Resolution: which records are one paper (works) and which signatures are one person
(authors).

Works: `works` (the `Doc` shape and identity keys), `blocking` (MinHash/LSH candidates),
`pairs` (pair scores and the match threshold), `cluster` (constrained union-find); the
incremental run over the store is `works_run.resolve_works` (matching against stored works:
`works_match`; work pages and curations: `works_curate`). Authors live in the `authors*`
modules. Kept import-light: importing a submodule must not pull in the others.
"""
