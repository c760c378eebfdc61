"""Next edits: the edit the user's last edit implies elsewhere, denoised in place where it belongs.

`history` keeps the user's recent edits (bursts coalesced), `candidates` ranks the regions where the next edit
may be, `suggest` masks them in one canvas with the history in its header (`header`), denoises them in one
run and decides per region whether the model's proposal is worth showing; `rule` is the rename rule the model
is measured against and whose text it may take.
"""
