"""Which field names say "identifier": the word lists behind FIELD_NAME_NO_IDENTIFIER.

A name is split on ``_`` and on digits into letter runs (``sha256_hash`` -> ``sha``,
``hash``). It is refused when:

1. a segment, or several adjacent segments glued together, is an identifier word
   (``user_id``, ``user_name`` -> ``username``, ``access_token`` -> ``accesstoken``);
2. a segment holds an identifier word glued to something else (``tokenhash``,
   ``ownerkey``, ``sessionkey``, ``clientip``). How a word is looked for inside a
   segment depends on how often ordinary English hides it (``GLUED``):
   - ``anywhere``: words no ordinary word contains by accident (``password``, ``uuid``);
   - ``suffix``: short words that end compounds (``tokenhash``, ``ownerkey``, ``userid``)
     but start ordinary ones (``keyboard``, ``idle``, ``hashtag``);
   - ``qualified``: ``ip`` and ``sha`` hide in too many words (``ownership``,
     ``shadow``) to look for them anywhere; only a listed qualifier glued in front
     counts (``clientip``, ``filesha``);
3. a run of adjacent segments glued together holds a word across a segment boundary
   (``myaccess_token`` -> ``myaccesstoken``).

A plural is read as its singular (``keys``, ``hashes``, ``ids``). ``ORDINARY_WORDS``
is the reviewed list of whole segments that hold a word by accident (``monkey``,
``valid``, ``paid``, ``possession``): they pass rule 2, never rule 1. A name that
still cannot be told apart from an identifier goes in the event's ``reviewed_names``
with a reason (the lock records it, ``check`` shows it): never a silent exception.

``user_runs_today``, ``user_tokens_today`` and ``model_calls`` are buckets and counts:
``user`` and ``token`` alone are not identifier words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import MappingProxyType
from typing import Literal

GlueMode = Literal["anywhere", "suffix", "qualified"]

# Every identifier word, and how it is looked for inside one segment.
GLUED: MappingProxyType[str, GlueMode] = MappingProxyType(
    {
        # ids and handles
        "id": "suffix",
        "ids": "suffix",
        "uid": "suffix",
        "uuid": "anywhere",
        "guid": "suffix",  # guide, guidance
        "userid": "anywhere",
        "username": "anywhere",
        "accountid": "anywhere",
        "serial": "anywhere",
        "fingerprint": "anywhere",
        "session": "anywhere",
        "cookie": "anywhere",
        # contact and network addresses
        "email": "anywhere",
        "mail": "suffix",  # mailbox is fine to refuse; voicemail is listed ordinary
        "phone": "anywhere",
        "address": "anywhere",
        "addr": "suffix",
        "ip": "qualified",
        "ipv": "suffix",  # ipv4, ipv6 split to ipv
        "imei": "anywhere",
        "msisdn": "anywhere",
        # government and bank numbers
        "ssn": "suffix",  # crossness, grossness
        "passport": "anywhere",
        "iban": "suffix",
        # hashes and digests
        "hash": "suffix",  # hashtag, hashing
        "sha": "qualified",  # shadow, shape, share
        "digest": "anywhere",
        "hmac": "anywhere",
        # keys, secrets and tokens
        "key": "suffix",  # keyboard, keyword
        "apikey": "anywhere",
        "secret": "anywhere",
        "password": "anywhere",
        "passwd": "anywhere",
        "credential": "anywhere",
        "jwt": "anywhere",
        "accesstoken": "anywhere",
        "authtoken": "anywhere",
        "apitoken": "anywhere",
        "refreshtoken": "anywhere",
    }
)
IDENTIFIER_WORDS: frozenset[str] = frozenset(GLUED)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A ``qualified`` word counts inside a segment only right after one of these.
QUALIFIERS: frozenset[str] = _words(
    """user client remote source src dest dst destination host server peer public private
    local device caller origin visitor customer account owner member tenant request session
    file commit content blob git image object payload body"""
)

# Whole segments (or their singular) that hold an identifier word by accident. Reviewed:
# each is an ordinary English word, none names an identifier.
ORDINARY_WORDS: frozenset[str] = _words(
    # ... ending in "id" / "uid"
    """acid afraid aid amid android arid asteroid avid avoid bid braid bridesmaid candid
    covid cupid devoid druid fetid florid fluid forbid grid horrid humanoid humid hybrid
    inlaid insipid intrepid invalid kid laid languid lid limpid lipid liquid lucid maid
    mermaid mid mislaid morbid opioid orchid overlaid overpaid paid placid plaid prepaid
    putrid pyramid raid rancid rapid repaid rid rigid said skid slid solid sordid
    splendid squid staid steroid stupid tabloid tepid thyroid timid torrid turbid
    underpaid unpaid unsaid valid vapid vivid void
    """
    # ... ending in "key"
    """donkey flunkey hockey hokey hotkey jockey lackey malarkey monkey pokey smokey
    turkey turnkey whiskey
    """
    # ... ending in "hash" / "mail"
    """rehash airmail blackmail chainmail voicemail
    """
    # ... holding "phone", "session", "secret", "digest", "address", "serial"
    """anglophone earphone francophone headphone homophone megaphone microphone phoneme
    phonetic phonetics saxophone sousaphone vibraphone xylophone
    dispossession obsession possession repossession
    secretariat secretaries secretary secretion secretive secretly
    digestible digestion digestive indigestion
    addressable
    deserialisation deserialise deserialised deserialiser deserialising
    deserialization deserialize deserialized deserializer deserializing
    serialisation serialise serialised serialiser serialising
    serialization serialize serialized serializer serializing
    """
)

_LETTER_RUNS = re.compile(r"[a-z]+")


def segments(name: str) -> list[str]:
    """The name's letter runs: split on ``_``, digits and anything else."""
    return _LETTER_RUNS.findall(name.lower())


def _forms(text: str) -> tuple[str, ...]:
    """The text and, for a plural, its singular (``keys`` -> ``key``, ``hashes`` -> ``hash``)."""
    forms = [text]
    if text.endswith("s"):
        forms.append(text[:-1])
        if text.endswith("es"):
            forms.append(text[:-2])
    return tuple(forms)


def _glued_in(segment: str) -> str | None:
    """The identifier word glued inside one segment, if any (rule 2)."""
    forms = _forms(segment)
    if any(form in ORDINARY_WORDS for form in forms):
        return None
    for word, mode in GLUED.items():
        for form in forms:
            if mode == "anywhere" and word in form:
                return word
            if mode == "suffix" and form.endswith(word):
                return word
            if mode == "qualified" and form.endswith(word) and form[: -len(word)] in QUALIFIERS:
                return word
    return None


def _across(run: list[str]) -> Iterator[str]:
    """Identifier words that a run of glued segments holds across a segment boundary."""
    text = "".join(run)
    cuts = set()
    at = 0
    for part in run[:-1]:
        at += len(part)
        cuts.add(at)
    for form in _forms(text):
        if form in IDENTIFIER_WORDS:
            yield form
        for word, mode in GLUED.items():
            if mode == "qualified":
                continue  # exact only: client_ip is caught by its segment
            start = form.find(word)
            while start != -1:
                end = start + len(word)
                crosses = any(start < cut < end for cut in cuts)
                if crosses and (mode == "anywhere" or end == len(form)):
                    yield word
                start = form.find(word, start + 1)


def identifier_word(name: str) -> str | None:
    """The identifier word the field name carries, or None when it carries none."""
    parts = segments(name)
    for part in parts:
        for form in _forms(part):
            if form in IDENTIFIER_WORDS:
                return form
    for part in parts:
        word = _glued_in(part)
        if word is not None:
            return word
    for size in range(2, len(parts) + 1):
        for start in range(len(parts) - size + 1):
            for word in _across(parts[start : start + size]):
                return word
    return None
