"""The items a conclusion leaves out are listed under it as their speakers wrote them."""
from markdown_it import MarkdownIt

from facilitation.deliberation.conclusion import with_gaps


def test_gaps_keep_peoples_words_and_names_as_written():
    gaps = [{"id": "C1", "kind": "concern", "by": "Ann_Lee *ops*", "text": "**Who** pays for <img src=x onerror=alert(1)>\n# not a heading"},
            {"id": "", "kind": "reject", "by": "", "text": "REJECT [here](http://evil)"}]
    text = with_gaps("We cache the read path.", gaps)
    html = MarkdownIt("commonmark").render(text)
    assert "<strong>" not in html and "<em>" not in html and "<img" not in html and "<a " not in html
    assert "<h1>" not in html and html.count("<h2>") == 1  # only the list's own heading
    assert "**Who** pays for &lt;img src=x onerror=alert(1)&gt; # not a heading" in html
    assert "(Ann_Lee *ops*)" in html and "(unattributed)" in html and "REJECT [here](http://evil)" in html
