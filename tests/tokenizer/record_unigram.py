#!/usr/bin/env python3
"""SentencePiece Unigram (XLM-RoBERTa-style) reference data for the tokenizer tests, from the `tokenizers` library.

Writes tests/tokenizer/unigram/:
  sentencepiece.bpe.model  a SentencePiece unigram model (4000 pieces, XLM-R's
                           normalization rule nmt_nfkc, character coverage
                           0.995 so rare characters stay unknown), trained here by
                           the `sentencepiece` package on /usr/share/common-licenses,
                           the sentence pairs, the multilingual lines below and the
                           translated messages in /usr/share/locale (gtk20, glib20,
                           iso_3166-1, iso_639-2 for 26 languages: Latin with
                           accents, Cyrillic, Greek, CJK, Arabic, Persian, Hebrew,
                           Devanagari, Bengali, Tamil, Thai, Hangul, Georgian,
                           Armenian). Only with --train: the file is committed, so
                           re-recording keeps the same vocabulary. Every run converts
                           it to the three tokenizer files below.
  tokenizer.json           XLM-RoBERTa (FacebookAI/xlm-roberta-base,
                           intfloat/multilingual-e5-*, ...) as transformers builds it
                           from sentencepiece.bpe.model: transformers'
                           XLMRobertaConverter (the slow->fast conversion behind
                           XLMRobertaTokenizerFast) gives the fairseq ids (<s> <pad>
                           </s> <unk>, piece i -> i + 1, <mask> last), normalizer
                           Sequence[Precompiled, Strip(right), Replace(" {2,}", "▁")],
                           Metaspace(prepend_scheme always, split), TemplateProcessing
                           <s> $A </s> / <s> $A </s> </s> $B </s>; then the special
                           tokens XLMRobertaTokenizerFast registers: <s> <pad> </s>
                           <unk>, and <mask> with lstrip.
  tokenizer-variant.json   the same ids and pieces as the older XLM-R derived files
                           written by tokenizers < 0.15 (sentence-transformers'
                           paraphrase-multilingual-*-v2, t5-small's original file):
                           normalizer Precompiled alone, pre-tokenizer
                           Sequence[WhitespaceSplit, Metaspace] in the legacy
                           "add_prefix_space": true form (as transformers 5's
                           XLMRobertaTokenizer also builds it), <mask> with lstrip and
                           normalized (as tokenizers 0.10's AddedToken default left
                           it); plus byte_fallback with the pieces <0x00>..<0xFF>
                           appended after <mask> (score 0, as SentencePiece's byte
                           pieces have; XLM-R's own files leave the option off, it
                           comes from SentencePiece models trained with
                           byte_fallback).
  tokenizer-first.json     the same pieces with SentencePiece's own ids (<unk> 0,
                           <s> 1, </s> 2; a T5/mT5-style layout) as transformers 5
                           converts a SentencePiece model with legacy=False
                           (TokenizersBackend): normalizer Sequence[Precompiled,
                           Replace(/\\A +| +\\z/, ""), Replace(/ {2,}/, " "),
                           Replace(" ", "▁")], Metaspace(prepend_scheme first,
                           split false); post-processor set here to T5's template
                           with the second sequence's type id 1: $A </s> /
                           $A </s> $B:1 </s>:1.
  expected.json            ids from Tokenizer.encode(text).ids (post-processor
                           applied, no truncation) for the three files, on the
                           sentence pairs' sentences, hand-written edge cases and
                           800 seeded random strings over all of Unicode (weighted
                           towards what stresses the Precompiled normalizer, the
                           grapheme clusters it works on, Metaspace and unknown-
                           character fusing); truncated encodings; text pairs
                           (Tokenizer.encode(a, b): ids and type_ids, untruncated and
                           with the longest_first and only_second strategies); and,
                           as a cross-check of tokenizer.json, the sentencepiece
                           library's own ids (sp.encode, shifted to the fairseq ids
                           as XLMRobertaTokenizer does, with <s> </s> added) for the
                           sentences.
  sweep.json               a per-code-point sweep for the three files: the ids of
                           "a" + chr(cp) + "b" and of "\\uFF21" + chr(cp) (fullwidth A
                           then the code point: the Precompiled normalizer rewrites
                           a whole grapheme cluster shorter than 6 bytes by the
                           mapping of its first code point) for every code point the
                           charsmap maps (all planes), every assigned code point of
                           U+0000..U+FFFF except the CJK ideograph, Hangul syllable
                           and Yi blocks (every 7th there), every 8th private-use or
                           unassigned one there, and every 41st assigned code point
                           above U+FFFF plus all of U+E0000..U+E01EF. Stored
                           compactly: "codepoints" as [first, last] ranges,
                           "sequences" the distinct id lists, and per file and probe
                           one index into "sequences" per code point.

Usage (a venv with `tokenizers`, `sentencepiece`, `transformers` >= 5 and
`protobuf`; the versions are recorded in expected.json):
  python tests/tokenizer/record_unigram.py [--train]
"""
import argparse
import base64
import gettext
import glob
import io
import json
import os
import random
import shutil
import sys
import tempfile
import unicodedata

import sentencepiece as spm
import tokenizers
import transformers
from tokenizers import AddedToken, Tokenizer, normalizers, processors
from transformers import TokenizersBackend
from transformers.convert_slow_tokenizer import XLMRobertaConverter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference"))
from sentence_pairs import sentence_pairs, sentences  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "unigram")
MODEL = os.path.join(OUT, "sentencepiece.bpe.model")
FILES = [("base", "tokenizer.json"), ("variant", "tokenizer-variant.json"), ("first", "tokenizer-first.json")]


# Training text in the scripts the sentence pairs and the licenses lack (the
# first article of the Universal Declaration of Human Rights, and a few more).
MULTILINGUAL = [
    "Tous les êtres humains naissent libres et égaux en dignité et en droits. Ils sont doués de raison et de "
    "conscience et doivent agir les uns envers les autres dans un esprit de fraternité.",
    "Alle Menschen sind frei und gleich an Würde und Rechten geboren. Sie sind mit Vernunft und Gewissen begabt "
    "und sollen einander im Geist der Brüderlichkeit begegnen.",
    "Todos los seres humanos nacen libres e iguales en dignidad y derechos y, dotados como están de razón y "
    "conciencia, deben comportarse fraternalmente los unos con los otros.",
    "Todos os seres humanos nascem livres e iguais em dignidade e em direitos. Dotados de razão e de "
    "consciência, devem agir uns para com os outros em espírito de fraternidade.",
    "Tutti gli esseri umani nascono liberi ed eguali in dignità e diritti.",
    "Wszyscy ludzie rodzą się wolni i równi pod względem swej godności i swych praw.",
    "Všichni lidé rodí se svobodní a sobě rovní co do důstojnosti a práv.",
    "Tất cả mọi người sinh ra đều được tự do và bình đẳng về nhân phẩm và quyền.",
    "Bütün insanlar hür, haysiyet ve haklar bakımından eşit doğarlar.",
    "Hver maður er borinn frjáls og jafn öðrum að virðingu og réttindum.",
    "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью и "
    "должны поступать в отношении друг друга в духе братства.",
    "Всі люди народжуються вільними і рівними у своїй гідності та правах.",
    "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα.",
    "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。",
    "人人生而自由，在尊嚴和權利上一律平等。他們賦有理性和良心，並應以兄弟關係的精神相對待。",
    "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。",
    "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다.",
    "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق.",
    "يُولَدُ جَمِيعُ النَّاسِ أَحْرَارًا مُتَسَاوِينَ فِي الكَرَامَةِ وَالحُقُوقِ.",
    "تمام افراد بشر آزاد به دنیا می‌آیند و از لحاظ حیثیت و حقوق با هم برابرند.",
    "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם.",
    "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है।",
    "ज़मीन फ़ोन क़लम ग़ज़ल ड़ ढ़ य़",
    "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ",
    "ყველა ადამიანი იბადება თავისუფალი და თანასწორი თავისი ღირსებითა და უფლებებით.",
    "Բոլոր մարդիկ ծնվում են ազատ ու հավասար իրենց արժանապատվությամբ ու իրավունքներով։",
    "সমস্ত মানুষ স্বাধীনভাবে সমান মর্যাদা এবং অধিকার নিয়ে জন্মগ্রহণ করে।",
    "மனிதப் பிறிவியினர் சகலரும் சுதந்திரமாகவே பிறக்கின்றனர்.",
]

LOCALE_LANGS = "de fr es pt pl cs vi tr ru uk bg el zh_CN zh_TW ja ko ar fa he hi mr bn th ka hy ta".split()
LOCALE_CATALOGS = ("gtk20", "glib20", "iso_3166-1", "iso_639-2")


def training_lines():
    lines = []
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                lines += f.read().splitlines()
    lines += sentences() + MULTILINGUAL
    for lang in LOCALE_LANGS:
        for catalog in LOCALE_CATALOGS:
            path = f"/usr/share/locale/{lang}/LC_MESSAGES/{catalog}.mo"
            if os.path.exists(path):
                with open(path, "rb") as f:
                    messages = gettext.GNUTranslations(f)._catalog
                for key in sorted(messages, key=str):
                    if isinstance(messages[key], str):
                        lines += messages[key].splitlines()
    return [line for line in lines if line.strip()]


def train():
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(training_lines()), model_writer=model,
                                   model_type="unigram", vocab_size=4000, character_coverage=0.995,
                                   normalization_rule_name="nmt_nfkc", num_threads=1, minloglevel=2)
    with open(MODEL, "wb") as f:
        f.write(model.getvalue())


class SlowXLMRobertaShim:
    """What XLMRobertaConverter reads from the slow XLMRobertaTokenizer (gone in transformers 5)."""
    vocab_file = MODEL
    add_prefix_space = True

    def convert_tokens_to_ids(self, token):
        return {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}[token]


def convert():
    # tokenizer.json: XLMRobertaTokenizerFast(vocab_file=sentencepiece.bpe.model).
    tok = XLMRobertaConverter(SlowXLMRobertaShim()).converted()
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in ("<s>", "<pad>", "</s>", "<unk>")])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)])
    tok.save(os.path.join(OUT, "tokenizer.json"), pretty=False)

    # tokenizer-variant.json: edited from tokenizer.json.
    with open(os.path.join(OUT, "tokenizer.json"), encoding="utf-8") as f:
        j = json.load(f)
    j["normalizer"] = j["normalizer"]["normalizers"][0]
    assert j["normalizer"]["type"] == "Precompiled"
    legacy_metaspace = {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}
    j["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, legacy_metaspace]}
    j["decoder"] = dict(legacy_metaspace)
    for t in j["added_tokens"]:
        if t["content"] == "<mask>":
            t["normalized"] = True
    vocab = j["model"]["vocab"]
    assert vocab[-1][0] == "<mask>" and not any(p.startswith("<0x") for p, _ in vocab)
    vocab += [[f"<0x{b:02X}>", 0.0] for b in range(256)]
    j["model"]["byte_fallback"] = True
    Tokenizer.from_str(json.dumps(j))  # must load
    with open(os.path.join(OUT, "tokenizer-variant.json"), "w", encoding="utf-8") as f:
        json.dump(j, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")

    # tokenizer-first.json: transformers 5 from the SentencePiece model alone, legacy=False.
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(MODEL, os.path.join(tmp, "tokenizer.model"))
        first = TokenizersBackend.from_pretrained(tmp, legacy=False).backend_tokenizer
    eos = first.token_to_id("</s>")
    first.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A:0 </s>:0 $B:1 </s>:1", special_tokens=[("</s>", eos)])
    first.save(os.path.join(OUT, "tokenizer-first.json"), pretty=False)


EDGE_CASES = [
    # whitespace
    "", " ", "  ", "   ", "\t", "\n", "\r\n", " \t \n ", "a", " a", "a ", "  a", "a  ", "  a  ", "a  b", "a   b  ",
    "a \u00a0b", "\ta", "a\t\tb", "a\tb\tc", "\n\nx\n", "line1\r\nline2\rline3\n", "a\u3000b", "\u3000", "a\u2028b\u2029c",
    "a\u2000b\u2003c\u200ad\u202fe\u205ff", "a\u1680b", "a\u0085b", "\u00a0\u00a0", "▁", "▁▁a", "a▁b", " ▁ a",
    # control and format characters
    "\x00", "a\x00b", "\x00\x00x", "\x01\x02\x03 \x1b[0m \x7f \x9f", "a\x0bb\x0cc", "\ufeffBOM", "a\ufeffb", "\ufeff",
    "\u200d", "\u200c", "a\u200db", "a\u200cb", "\u200b", "a\u200bb", "soft\u00adhyphen", "\u00ad", "a\u2060b",
    "\u061c\u200e\u200f\u202a\u202e", "\ufff9\ufffa\ufffb", "\ufffd", "\ufffe\uffff", "\U000e0001\U000e0041\U000e007f",
    # literal special tokens
    "<s>", "</s>", "<pad>", "<unk>", "<mask>", " <mask>", "   <mask>", "a<mask>", "a <mask> b", "a  <mask>  b",
    "<mask><mask>", " <mask> <mask> ", "x<s>y</s>z", "<s> <pad> <unk>", "<s></s>", "hello <s> world </s> end",
    "<mas", "mask>", "<MASK>", "＜mask＞", "<0x41>", "<0x00>x", "<unk><unk>", "</s> </s>",
    # Latin, accents, decomposed and composed
    "Hello, World!", "hello world", "naïve café Crème Brûlée", "Die Straße ist groß", "e\u0301", "e\u0301\u0301",
    "cafe\u0301 cafe\u0301s", "\u0301abc", "a\u0308o\u0308u\u0308", "A\u030a", "Å Å Å", "\u1e9b\u0323", "ḍ̇ ḍ̇",
    "İstanbul ıi IŞIK", "Tiếng Việt có dấu", "ǅ ǈ ǋ", "ŉ ſ ß ẞ",
    # fullwidth, halfwidth and compatibility characters
    "Ａｂｃ１２３", "ＨＥＬＬＯ　ｗｏｒｌｄ！", "Ａ\u0301", "ｅ\u0301", "Ａ\u0301\u0302", "ａ\u0308ｂ", "Ａ\u20dd", "Ａ\u0345",
    "ｶﾀｶﾅ ﾊﾟﾋﾟ ｶﾞ", "ﾞﾟ", "ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ", "ﬁnance oﬃce", "① ⑳ ㉑ ⑴ ⒜ Ⓐ", "㍿ ㍻ ㌀ ㎏ ㎞ ㏄", "™ ℠ ℡ № ℃ ℉",
    "½ ¼ ¾ ⅓ ⅞ ↉", "x² y³ z⁴ H₂O ⁱⁿ", "Ⅻ ⅻ Ⅳ ⅳ", "𝐀𝐁𝐂 𝒳 𝔄 𝟘𝟙", "ℌℍℎ ℏ", "…‥", "“quotes” ‘single’ «guillemets»",
    "¨ ´ ¸ ˘ ˙", "ʰ ʲ ˡ", "ǆ ǉ ǌ Ĳ ĳ", "µ Ω Å K", "㈱ ㈲ ㊤ ㋀", "⼀ ⼆ ⽇", "︵ ︶ ﹏ ﹐", "ﺍ ﺏ ﻻ ﷺ ﷽",
    # Hangul: syllables, conjoining jamo, compatibility jamo, halfwidth jamo
    "한국어 텍스트입니다", "안녕하세요", "\u1100\u1161\u11a8", "\u1100\u1161", "\u1112\u1161\u11ab\u1100\u1173\u11af",
    "\u1100\u1100\u1161\u1161", "\uac00\u11a8", "\ua960\ud7b0\ud7cb", "ㄱㅏㄴ ㅎㅏㄴ", "ﾡﾢﾣ", "\u115f\u1160",
    # Indic
    "नमस्ते दुनिया", "क्ष त्र ज्ञ", "क़ ख़ ग़", "\u0958\u0959\u095a", "क\u093c", "ज़मीन फ़ोन", "र्‍य", "क्‌ष", "\u094d",
    "বাংলা ভাষা", "தமிழ் மொழி", "ਪੰਜਾਬੀ ਜ਼", "ഭാഷ ൻ ൽ", "කුමක්ද",
    # Thai, Lao, Khmer
    "สวัสดีชาวโลก", "ภาษาไทย ๑๒๓", "ำ ํา", "\u0e33\u0e4d\u0e32", "ສະບາຍດີ ຳ", "ភាសាខ្មែរ",
    # Arabic, Persian, Hebrew
    "مرحبا بالعالم", "يُولَدُ جَمِيعُ النَّاسِ", "الْحَمْدُ لِلَّهِ", "می‌آیند", "٣٤٥ ۴۵۶", "ﻻ ﻵ", "שלום עולם", "בְּרֵאשִׁית",
    # CJK
    "你好世界，今天天气很好。", "日本語のテキスト", "東京は日本の首都です。", "がっこう カタカナ ｶﾀｶﾅ", "ｶﾞｯｺｳ",
    "𠀀𠀁𠀂", "𠀀 𠀁 𠀂", "龘龘龘", "a𠀀b𠀁c", "丽 丸 乁", "\U0002f800\U0002f801", "〃々〆〇",
    # emoji
    "😀", "emoji 😀👍🏽 👨‍👩‍👧 🇩🇪", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "❤\ufe0f", "1\ufe0f\u20e3 #\ufe0f\u20e3",
    "🇩🇪🇫🇷🇯🇵", "🇩", "🇩🇪🇫", "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f", "😀" * 5,
    "\u263a\ufe0e \u263a\ufe0f",
    # unknown characters in runs (unk fusing), private use, unassigned
    "\ue000", "\ue000\ue001\ue002", "a\ue000\ue001b", "\ue000 \ue001", "\U000f0000\U0010fffd", "\U0010ffff",
    "ꙮꙮꙮ", "ᚠᚢᚦ ᚨᚱᚲ", "𓀀𓀁𓀂", "\u0378\u0379", "x\u0378y", "☃☃ ☃", "🂡🂢🂣", "a☃b☃c", "⨌ ⨍",
    # long words and repetition
    "a" * 64, "Thisisaverylongwordwithoutanyspacesatallthatgoesonandon" * 3, "ab" * 200, "你" * 120,
    "\ue000" * 50, "x" * 3 + " " * 5 + "y", " " * 40, "é" * 50 + " " + "É" * 51,
    # misc
    "GNU General Public License version 3", "I'm you're we've she'll", "$100 -> 50% @user #tag",
    "http://example.com/path?q=1&r=2", "snake_case_name camelCaseName kebab-case-name", "Mixed123Numbers456",
    "Привет, мир!", "Καλημέρα κόσμε", "ΟΔΥΣΣΕΥΣ ς σ Σ", "Ёжик ё й",
]


def random_strings(n, seed):
    rng = random.Random(seed)

    def cps(*ranges):
        return [chr(c) for lo, hi in ranges for c in range(lo, hi + 1) if not 0xD800 <= c <= 0xDFFF]

    pools = [
        (8, cps((0x20, 0x7E))),
        (3, list(" \t\n\r\x0b\x0c\x00\x01\x1f\x7f\x85\u00a0\u1680\u2000\u2003\u200a\u2028\u2029\u202f\u205f\u3000"
                 "\ufeff\u200b\u200c\u200d\u2060\u00ad\u180e") + ["  ", "\r\n", "\u2581"]),
        (2, cps((0xA0, 0x24F), (0x1E00, 0x1EFF))),
        (2, cps((0x300, 0x36F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0xFE20, 0xFE2F))),
        (2, cps((0xFF01, 0xFFEE))),
        (2, cps((0x2460, 0x24FF), (0x3200, 0x33FF), (0xFB00, 0xFB4F), (0x2150, 0x218F), (0x2100, 0x214F),
                (0x2070, 0x209F), (0xFE30, 0xFE6F), (0xFE70, 0xFEFC), (0x1D400, 0x1D7FF), (0x1F100, 0x1F1FF),
                (0x2F00, 0x2FDF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F), (0x02B0, 0x02FF))),
        (2, cps((0x370, 0x52F))),
        (1, cps((0x590, 0x6FF), (0x750, 0x77F), (0xFB50, 0xFDFF))),
        (2, cps((0x900, 0x9FF), (0xB80, 0xBFF), (0xA00, 0xA7F))),
        (1, cps((0xE00, 0xE7F), (0xE80, 0xEFF))),
        (2, cps((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xD7B0, 0xD7FF), (0xFFA0, 0xFFDC))
         + [chr(rng.randrange(0xAC00, 0xD7A4)) for _ in range(300)]),
        (2, cps((0x3040, 0x30FF), (0x4E00, 0x4FFF), (0x20000, 0x2007F), (0x3000, 0x303F))),
        (2, cps((0x1F300, 0x1F64F), (0x1F900, 0x1F9FF), (0x1F3FB, 0x1F3FF), (0x1F1E6, 0x1F1FF), (0x2600, 0x26FF),
                (0xE0020, 0xE007F)) + ["\u200d", "\ufe0f", "\ufe0e", "\u20e3", "\u200d\U0001f468"]),
        (1, ["<s>", "</s>", "<mask>", " <mask>", "<pad>", "<unk>", "<0x41>", "\u2581", "▁▁", "Ａ", "ｅ", "ﬁ", "①",
             "㍿", "™", "½", "the", " the", "license", "Lizenz", "лицензия", "许可"]),
        (1, cps((0xE000, 0xE0FF), (0xF0000, 0xF00FF), (0x0378, 0x0379), (0x2FE0, 0x2FEF), (0xFDD0, 0xFDEF),
                (0x10FFF0, 0x10FFFF))),
        (2, None),  # any scalar value
    ]
    weights = [w for w, _ in pools]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 40)):
            _, pool = rng.choices(pools, weights)[0]
            if pool is None:
                cp = rng.randrange(0x110000)
                while 0xD800 <= cp <= 0xDFFF:
                    cp = rng.randrange(0x110000)
                parts.append(chr(cp))
            else:
                parts.append(rng.choice(pool))
        out.append("".join(parts))
    return out


def record(name, tok, texts):
    return {"file": name, "ids": [e.ids for e in tok.encode_batch(texts, add_special_tokens=True)]}


def sentencepiece_ids(sp, text):
    """XLMRobertaTokenizer (slow): spm id i -> i + 1, spm's <unk> (0) -> 3, then <s> ... </s>."""
    return [0] + [i + 1 if i else 3 for i in sp.encode(text)] + [2]


def sweep_codepoints(charsmap):
    def assigned(c):
        return unicodedata.category(chr(c)) not in ("Cn", "Cs", "Co")

    mapped = normalizers.Precompiled(charsmap)
    cps = set()
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        if mapped.normalize_str(chr(c)) != chr(c):
            cps.add(c)  # the charsmap's domain
        elif c <= 0xFFFF:
            sampled = (0x3400 <= c <= 0x4DBF or 0x4E00 <= c <= 0x9FFF or 0xA000 <= c <= 0xA4CF
                       or 0xAC00 <= c <= 0xD7A3)
            if assigned(c):
                if not sampled or c % 7 == 0:
                    cps.add(c)
            elif c % 8 == 0 or 0xFDD0 <= c <= 0xFDEF or c >= 0xFFF0:
                cps.add(c)
        elif 0xE0000 <= c <= 0xE01EF or (assigned(c) and c % 41 == 0) or c % 4099 == 0 or c >= 0x10FFFE:
            cps.add(c)
    return sorted(cps)


def ranges(values):
    out = []
    for v in values:
        if out and out[-1][1] + 1 == v:
            out[-1][1] = v
        else:
            out.append([v, v])
    return out


def sweep(toks, charsmap):
    cps = sweep_codepoints(charsmap)
    probes = {"a%sb": lambda c: "a" + chr(c) + "b", "\uff21%s": lambda c: "\uff21" + chr(c)}
    sequences, index, files = [], {}, {}
    for key, name in FILES:
        files[name] = {}
        for probe, make in probes.items():
            encodings = toks[key].encode_batch([make(c) for c in cps], add_special_tokens=True)
            column = []
            for e in encodings:
                ids = tuple(e.ids)
                if ids not in index:
                    index[ids] = len(sequences)
                    sequences.append(list(ids))
                column.append(index[ids])
            files[name][probe] = column
    return {
        "generator": "tests/tokenizer/record_unigram.py",
        "tokenizers": tokenizers.__version__,
        "probes": list(probes),
        "count": len(cps),
        "codepoints": ranges(cps),
        "sequences": sequences,
        "files": files,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", action="store_true", help="train sentencepiece.bpe.model again (changes the vocabulary)")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    if args.train:
        train()
    convert()

    toks = {key: Tokenizer.from_file(os.path.join(OUT, name)) for key, name in FILES}
    sents = sentences()
    texts = sents + EDGE_CASES + random_strings(800, 20261202)

    truncated = []
    for max_len in (2, 3, 8):
        for tok in toks.values():
            tok.enable_truncation(max_len)
        for t in texts[:40:3] + EDGE_CASES[::6]:
            truncated.append({"text": t, "max_len": max_len, **{k: tok.encode(t).ids for k, tok in toks.items()}})
    for tok in toks.values():
        tok.no_truncation()

    pairs = sentence_pairs()
    pairs += [(pairs[i][0], pairs[(i + 7) % len(pairs)][1]) for i in range(50 - len(pairs))]
    encoded_pairs = []
    for strategy, max_len in ((None, None), ("longest_first", 12), ("longest_first", 20), ("only_second", 24)):
        for a, b in pairs:
            entry = {"a": a, "b": b, "strategy": strategy, "max_len": max_len}
            for key, tok in toks.items():
                if strategy is None:
                    tok.no_truncation()
                else:
                    tok.enable_truncation(max_len, strategy=strategy)
                try:
                    e = tok.encode(a, b)
                    entry[key] = {"ids": e.ids, "type_ids": e.type_ids}
                except Exception as err:  # only_second with a first sequence too long for max_len
                    entry[key] = {"error": str(err)}
            encoded_pairs.append(entry)
    for tok in toks.values():
        tok.no_truncation()

    sp = spm.SentencePieceProcessor(model_file=MODEL)
    data = {
        "generator": "tests/tokenizer/record_unigram.py",
        "tokenizers": tokenizers.__version__,
        "sentencepiece": spm.__version__,
        "transformers": transformers.__version__,
        "texts": texts,
        "tokenizers_files": [record(name, toks[key], texts) for key, name in FILES],
        "sentencepiece_ids": {"file": "tokenizer.json", "model": "sentencepiece.bpe.model",
                              "note": "sp.encode(text) as XLMRobertaTokenizer (slow) maps it, for texts[:count]",
                              "count": len(sents), "ids": [sentencepiece_ids(sp, t) for t in sents]},
        "truncated": truncated,
        "pairs": encoded_pairs,
    }
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")

    with open(os.path.join(OUT, "tokenizer.json"), encoding="utf-8") as f:
        charsmap = base64.b64decode(json.load(f)["normalizer"]["normalizers"][0]["precompiled_charsmap"])
    swept = sweep(toks, charsmap)
    with open(os.path.join(OUT, "sweep.json"), "w", encoding="utf-8") as f:
        json.dump(swept, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")

    # The cross-check, over every text without a literal special token: report, don't fail.
    base_ids = data["tokenizers_files"][0]["ids"]
    specials = ("<s>", "</s>", "<pad>", "<unk>", "<mask>")
    checked = [i for i, t in enumerate(texts) if not any(s in t for s in specials)]
    differ = [i for i in checked if sentencepiece_ids(sp, texts[i]) != base_ids[i]]
    assert not any(i < len(sents) for i in differ), "sentencepiece and tokenizers disagree on a sentence"
    print(f"{len(texts)} texts, {len(truncated)} truncated, {len(encoded_pairs)} pairs, "
          f"{swept['count']} code points swept; sentencepiece differs from tokenizer.json on "
          f"{len(differ)} of {len(checked)} texts (tokenizers {tokenizers.__version__}, sentencepiece "
          f"{spm.__version__}, transformers {transformers.__version__})", file=sys.stderr)


if __name__ == "__main__":
    main()
