"""Exports of a discussion: Markdown (conclusion + transcript) and .docx minutes."""
from facilitation.exports.docx import DOCX_TYPE, render_docx
from facilitation.exports.markdown import MARKDOWN_TYPE, render_markdown

__all__ = ["DOCX_TYPE", "MARKDOWN_TYPE", "render_docx", "render_markdown"]
