"""Resolution: which records are one paper (works) and which signatures are one person
(authors).

Works: `works` (the `Doc` shape and identity keys), `blocking` (MinHash/LSH candidates),
`pairs` (pair scores and the match threshold), `cluster` (constrained union-find); the
store-backed incremental run is `paperdesk.store.works.resolve_works`. Authors live in the
`authors*` modules. Kept import-light: importing a submodule must not pull in the others.
"""
