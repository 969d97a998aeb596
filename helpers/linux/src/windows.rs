//! PLACEHOLDER: being written; replaced wholesale by its owner.
