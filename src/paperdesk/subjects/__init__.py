"""arXiv subjects: the taxonomy (`taxonomy`), labelled examples from the arXiv daily feed
(`feed`), the classifier that predicts subjects for records that come without them
(`classifier`), and its training and evaluation (`training`).

Storing subjects per record and deriving them per work is `paperdesk.store.subjects`.
"""
