"""arXiv subjects: the taxonomy (`taxonomy`), labelled examples from the arXiv daily feed
(`feed`), the classifier that predicts subjects for records that come without them
(`classifier`), and its training and evaluation (`training`).

The classify stage (subjects per record, derived per work) is `classify`; its tables are
`paperdesk.store.sql.subjects`.
"""
