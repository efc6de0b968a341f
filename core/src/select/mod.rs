//! Least-used selection (filled in by the select work).
