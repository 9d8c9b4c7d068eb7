//! cordon-sandbox
