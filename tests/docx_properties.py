"""What every exported Word document says of itself."""
from django.utils import timezone


def assert_our_properties(doc, title):
    """The document's properties name the export, not python-docx's template (its author, a 2013 date, a comment)."""
    props = doc.core_properties
    assert (props.title, props.author, props.last_modified_by, props.comments) == (title, "Convene", "Convene", "")
    assert abs((timezone.now() - props.created).total_seconds()) < 120 and props.modified == props.created
