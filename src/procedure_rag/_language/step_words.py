"""The words that parse a step into its fields, Japanese and English side by side.

Data only: :mod:`procedure_rag._language.lexicons` puts these patterns into each
language's :class:`~procedure_rag._language.lexicons.Lexicon`, and
:mod:`procedure_rag._language.step_fields` and :mod:`procedure_rag._language.targets`
apply whichever lexicon a document has. The forms follow the step-field annotation
guide: a condition is its clause with the particle that closes it (「〜場合は」), a
purpose clause before the action is not part of it, a note opened by a label is a
caution whose label is dropped (``Note that``, 「なお、」, ※) or kept when it is part
of the sentence (``However,``, 「ただし、」), a target is the operated label without its
generic suffix (ボタン, button…).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from procedure_rag._language.alternation import by_first_letter

__all__ = [
    "ENGLISH_STEP_WORDS",
    "EN_ACTION_VERB",
    "EN_CONDITION",
    "EN_OPERATE_BEFORE",
    "EN_OPERATE_VERBS",
    "EN_RESULT",
    "EN_VERBS",
    "JAPANESE_STEP_WORDS",
    "JA_CONDITION",
    "JA_OPERATE_AFTER",
    "JA_OPERATE_VERBS",
    "JA_RESULT",
    "NEVER",
    "NO_STEP_WORDS",
    "StepWords",
]

#: A pattern that never matches: the default for a rule a lexicon does not have.
NEVER = re.compile(r"(?!)")

# Imperative verbs English steps open with (and that end a condition written without
# a comma: "If prompted type it"). Lower case; matched case-insensitively.
EN_VERBS = (
    "access|activate|add|adjust|agree|allow|apply|approve|assign|attach|authenticate|back up|"
    "browse|build|calibrate|call|cancel|capture|change|charge|check|choose|clean|clear|click|close|"
    "collapse|compare|complete|configure|confirm|connect|consider|contact|continue|copy|create|"
    "customize|deactivate|define|delete|deploy|deselect|detach|disable|disconnect|dismiss|"
    "double-click|download|drag|drop|edit|eject|email|enable|enroll|ensure|enter|erase|exit|expand|"
    "export|extract|fill|find|finish|fix|follow|format|gaze|give|go|grant|hold|identify|import|include|"
    "insert|install|invite|join|keep|launch|leave|lift|load|locate|lock|log|look|make|mark|modify|"
    "monitor|mount|move|name|navigate|note|open|pair|paste|pause|perform|pick|pin|place|plug|point|"
    "position|power|press|print|proceed|provide|publish|pull|push|put|read|reapply|reboot|record|"
    "re-enter|refer|refresh|register|reinstall|release|remove|rename|repeat|replace|reproduce|request|"
    "reset|resolve|restart|restore|resume|retry|return|review|right-click|rotate|run|save|say|scan|scroll|"
    "search|see|select|send|set|setup|share|shut|sign|skip|specify|start|stop|store|submit|swipe|"
    "switch|sync|tap|tell|test|tick|toggle|troubleshoot|try|turn|type|uncheck|uninstall|unlock|unpair|unplug|"
    "unzip|update|upgrade|upload|use|validate|verify|view|visit|wait|wear|wipe|write"
)

# English verbs that operate a UI element (a state check does not: "make sure", "verify").
EN_OPERATE_VERBS = (
    "select|click|tap|choose|open|close|press|go to|navigate to|browse to|turn on|turn off|enable|"
    "disable|toggle|switch|set|change|move|enter|type|copy|paste|drag|drop|remove|delete|add|create|"
    "assign|configure|install|uninstall|launch|start|restart|reset|calibrate|connect|disconnect|"
    "unplug|hold|release|tap|expand|collapse|check|uncheck|tick|clear|right-click|double-click|"
    "edit|rename|save|export|import|download|upload|apply|file(?= (?:a|an|the) )|submit|run|use|put|"
    "place|pin|position|specify|fill in|sign in to|sign out of|log in to|point to|look at|gaze at|"
    "activate|deactivate|register|enroll|reinstall|reapply|extract|unzip|share|send|view|load"
)

# Japanese verbs (verbal nouns and stems) that operate what is marked by を or に before them.
JA_OPERATE_VERBS = (
    "選択|クリック|ダブルクリック|右クリック|タップ|長押し|押下|押し|押す|押して|入力|記入|開|閉|起動|"
    "接続|切断|設定|変更|削除|追加|作成|複製|コピー|貼り付け|移動|実行|指定|保存|調整|適用|構成|リセット|"
    "インストール|アンインストール|ダウンロード|アップロード|有効|無効|オン|オフ|チェック|登録|編集|"
    "参照|展開|更新|送信|取り込|取得|読み取|読み込|エクスポート|インポート|サインイン|ログイン|"
    "ドラッグ|ドロップ|スクロール|表示|切り替え|選び|修正|控え|使用|利用|書き換え|置き換え|アップデート|入れ|"
    "提示|挿入|外し|差し込|抜"
)

# The lists as the patterns embed them: grouped by first letter, which re tries far faster
# (see procedure_rag._language.alternation); they match what the plain lists match.
_EN_VERBS = by_first_letter(EN_VERBS)
_EN_OPERATE = by_first_letter(EN_OPERATE_VERBS)
_JA_OPERATE = by_first_letter(JA_OPERATE_VERBS)


@dataclass(frozen=True, slots=True)
class StepWords:
    """The step-field rules of one language that only step parsing reads.

    Attributes:
        not_condition: A leading clause that looks like a condition but is not (a delay).
        trailing_condition: A condition that closes a clause ("Select Yes when
            prompted"); group ``cond``.
        purpose: A purpose clause that opens a step and is not part of its action
            ("To reset the device, "); group ``purpose``.
        note_opener: A sentence that opens a note inside a step's text; group
            ``label`` (when set) is dropped from the caution.
        instruction: A sentence that tells the reader to do something.
        statement: A sentence that states, though it ends like an instruction
            (「…可能性があります」).
        modal: A sentence that says what the reader can do ("You can …", 「…できます」):
            an action when nothing else instructs, never the continuation of one.
        continuation: What a sentence right after an instruction needs to be another
            instruction of the same action (「…を押します」, 「…してください」).
        operates: Words that operate something wherever they stand in a sentence
            (「…を選択して、…」): such a sentence reports nothing.
        act_then_result: An action and its result in one sentence (「…をクリックすると、
            …が表示されます」); groups ``act`` and ``rest``.
        aside_reference: A trailing parenthetical reference ("(see …)") left out of
            the action.
        object_np: The object an operating verb takes; group ``np``.
        object_marker: A string every ``object_np`` match holds (Japanese を), so that a
            text without it is not scanned; ``""`` when there is none.
        state_check: Words that check a state rather than operate something.
        input_verb: Words that type data (the field typed into is the target).
        input_field: A UI element that takes typed data.
        generic_suffix: A generic UI word ending a label (ボタン, button), dropped
            from a target unless the label is only that word.
        marked_suffix: The generic words dropped from a label the author marked
            (quoted, bracketed, bold): Japanese quotes the word with the name
            (「鉛筆アイコン」), English bold names keep theirs (**Show offline apps**).
        generic_label: A label that names no element ("Option 1").
        modifier: What opens a target without naming it (「キオスク モード用の」).
        determiner: A word before a target that is not part of its name ("the",
            "your", 「この」); also what no object ends with ("hold the").
        pronoun: An object that names nothing ("it", 「それ」).
        coordination: What stands between two labels operated together ("the
            **Volume Down** and **Power** buttons", 「A、B」).
        alternative: Between alternatives, of which the target is the first ("Wi-Fi or
            your ethernet connection", 「Wi-Fi またはイーサネット接続」).
        place: Where a UI element sits rather than its name (「画面左上」): a field so
            placed is named by its generic word (「入力欄」).
        field_label: A step that is a field and its value ("Name: any name"); group
            ``label``.
        instruction_outranks_result: Whether a sentence that instructs is never a
            report, whatever result words it holds: English instructs at its start
            ("Open Settings" holds "open"); a Japanese sentence instructs or reports by
            its ending (「デバイスが再起動します」 reports).
        stands_alone: How an instruction ends when it is a step by itself, with no number to
            say so (Word text whose list numbers were lost,
            :mod:`procedure_rag._readers.unmarked_steps`): a Japanese step asks politely
            (「…を選択します。」, not 「…されます」) or ends on what it operates
            (「手動セットアップに変更」); an English instruction says so at its start, so any
            ending will do.
    """

    not_condition: re.Pattern[str]
    trailing_condition: re.Pattern[str]
    purpose: re.Pattern[str]
    note_opener: re.Pattern[str]
    instruction: re.Pattern[str]
    statement: re.Pattern[str]
    modal: re.Pattern[str]
    continuation: re.Pattern[str]
    operates: re.Pattern[str]
    act_then_result: re.Pattern[str]
    aside_reference: re.Pattern[str]
    object_np: re.Pattern[str]
    state_check: re.Pattern[str]
    input_verb: re.Pattern[str]
    input_field: re.Pattern[str]
    generic_suffix: re.Pattern[str]
    marked_suffix: re.Pattern[str]
    generic_label: re.Pattern[str]
    modifier: re.Pattern[str]
    determiner: re.Pattern[str]
    pronoun: re.Pattern[str]
    coordination: re.Pattern[str]
    alternative: re.Pattern[str]
    place: re.Pattern[str]
    field_label: re.Pattern[str]
    object_marker: str = ""
    instruction_outranks_result: bool = False
    stands_alone: re.Pattern[str] = re.compile("")


# A run of text that may hold balanced brackets (a link's text with "(2FA)", a quoted label).
_JA_CLAUSE = r"(?:[^。(（「\n]|\([^()\n]{0,80}\)|（[^（）\n]{0,80}）|「[^「」\n]{0,80}」)"
_JA_UI_SUFFIX = (
    r"ボタン|トグルボタン|ラジオボタン|タブ|画面|メニュー|入力欄|欄|アイコン|タイル|アプリ|リンク|"
    r"スライダー[ \u3000]?スイッチ|フォルダー?|プルダウン|チェックボックス|ダイアログ|ウィンドウ|スイッチ|"
    r"フィールド|文字|項目"
)

# One word of a Japanese object: a quoted, bracketed or bold label, or a run of katakana,
# kanji and Latin letters (hiragana are particles and modifiers, 「以前に保存した」).
_JA_WORD = r"[A-Za-z0-9\u30a0-\u30ff\u4e00-\u9fff\u3005\uff10-\uff19\uff21-\uff3a\uff41-\uff5a._+#/-]"
_JA_NOT_MID_WORD = rf"(?<!{_JA_WORD})"
_JA_TOKEN = (
    rf"(?:「[^「」\n]{{1,60}}」|『[^『』\n]{{1,60}}』|\*\*[^*\n]{{1,60}}\*\*|\[[^\[\]\n]{{1,60}}\]|"
    rf"`[^`\n]{{1,40}}`|\([^()\n]{{1,40}}\)|（[^（）\n]{{1,40}}）|{_JA_WORD}++)"
)

#: 「〜場合は」「〜とき、」「〜なら」「〜たら」「〜れば」「〜と、」「〜後、」「〜状態で、」 opening a
#: sentence: the clause up to its marker, with the particle that closes it; a comma or
#: the particle ends it.
JA_CONDITION = re.compile(
    rf"^(?P<cond>{_JA_CLAUSE}{{0,140}}?"
    r"(?:(?:場合|とき|時|際)(?:には|では|でも|は|も)"
    r"|(?:場合|とき|時|際|状態で|(?<![そこ最直午今以前])後|[うくすつぬぶむるたい]と(?![いきしもなか])|ないと|"
    r"(?:必要|状況)に応じて)(?=[、，,])"
    r"|場合(?=[\u4e00-\u9fff])"
    r"|(?:たら|れば(?!なら|いけ)|ならば|なら(?![なずでい]))(?=[、，,]|\S)))"
    r"[、，,]?"
)

#: What the system does or shows: passive or intransitive endings, things appearing.
JA_RESULT = re.compile(
    r"(?:(?:さ|ら)れ(?:ます|る|た|ました|ています|ていきます)|(?:に|と)なり(?:ます|ました)|(?:に|と)なる|"
    r"(?:始まり|消え|届き|切り替わり|変わり|戻り|現れ|終わり|点灯し|消灯し|点滅し|遷移し|(?<!提)示し|"
    r"フェードアウトし)(?:ます|る)|"
    # Verbs that are also the reader's (「フォルダーを開きます」): a result only without an object.
    r"(?:^|[、。])[^、。を]*(?:開き|閉じ|起動し|再起動し|表示し|完了し|シャットダウンし|終了し)(?:ます|る))"
    r"[*」』)）\s]*[。．]?\s*$"
)

#: Words after a label that operate it (「[保存] を選択」「複製ボタンを押下」).
JA_OPERATE_AFTER = re.compile(
    rf"[*\]」』`\s]*(?:(?:{_JA_UI_SUFFIX})\s*)?(?:を|に|で|から|の順に|の順で|を順に)?\s*{_JA_OPERATE}"
)

JAPANESE_STEP_WORDS = StepWords(
    # A delay is not a condition: 「1秒後に、…」.
    not_condition=re.compile(r"^[0-9０-９数]+\s*(?:秒|分|時間|日)(?:間)?後"),
    trailing_condition=NEVER,
    # 「パスワードを変更するには、」「〜するために、」: dropped from the start of an action.
    purpose=re.compile(
        r"^(?P<purpose>[^。、「」\n]{1,80}?(?:[うくすつぬぶむる]|ない)(?:ためには|ために|には)[、，,]?\s*)"
    ),
    # ※ / 注： / 注意： / 重要： / 【注意】 / なお、 are dropped; ただし、 is part of the sentence.
    note_opener=re.compile(
        r"^\s*(?:(?P<label>※\s*[0-9０-９]*\s*|(?:\*\*)?(?:注|注意|ご注意|重要|警告|注記)(?:\*\*)?\s*[:：]\s*"
        r"|[【［\[(（](?:注|注意|重要|警告|注記)[】］\])）]\s*|なお[、，]\s*)|(?=(?:ただし|但し)[、，]))"
    ),
    # What tells the reader to do something: a polite or plain verb ending, a request, or a
    # verbal noun ending a terse step (「…を実行。」「…をタップ」).
    instruction=re.compile(
        r"(?:ください|下さい|ましょう|[しきぎちにびみりいえけげせてねべめれ]ます|する|しない|せず|(?<!で)[うくすつぬぶむる]|こと|"
        rf"(?:{_JA_OPERATE}|確認|記入|設定))[*」』)）※\s]*[。．]?\s*$"
    ),
    statement=re.compile(
        r"(?:(?:可能性|場合|恐れ|おそれ|こと)が(?:あります|ある)|です|でした|でしょう|ません|であり|である|"
        r"[てで]い(?:ます|る))"
        r"[*」』)）\s]*[。．]?\s*$"
    ),
    modal=re.compile(r"(?:ことが|ことも)?でき(?:ます|る)[*」』)）\s]*[。．]?\s*$"),
    # Japanese polite endings also state things (「…に役立ちます」): another instruction of
    # the action operates something or asks for it.
    continuation=re.compile(rf"を\s*{_JA_OPERATE}|(?:ください|下さい|ましょう)[*」』)）\s]*[。．]?\s*$"),
    operates=re.compile(rf"を\s*{_JA_OPERATE}(?!され|られ)"),
    # A step by itself asks politely (not 「…されます」「…になります」「…があります」, which report)
    # or tersely ends on what it operates (「手動セットアップに変更」「[OK] を選択」).
    stands_alone=re.compile(
        rf"(?:(?<!れ)(?<!なり)(?<!あり)ます|ください|下さい|[をに]\s*{_JA_OPERATE})[」』)）\s]*[。．]?\s*$"
    ),
    # 「…をクリックすると、…が表示されます」: the action ends at the verb, the rest is its result.
    act_then_result=re.compile(
        r"^(?P<act>[^。]*?を[^。、]*?[うくすつぬぶむる])(?<!よう)と(?![いきしもなか])[、，,]?\s*(?P<rest>[^。].*)$"
    ),
    aside_reference=re.compile(r"\s*[(（][^()（）]*(?:参照|ご覧)[^()（）]*[)）]\s*(?=[。．]?\s*$)"),
    # The noun phrase marked by を (or に) before an operating verb: katakana, kanji and
    # Latin words (a modifier in hiragana, 「以前に保存した」, stays out).
    object_np=re.compile(
        # Not inside a word: a match starting there would have started at the word's first
        # letter (the word is one token either way), so the scan skips the rest of the word.
        rf"{_JA_NOT_MID_WORD}"
        rf"(?P<np>{_JA_TOKEN}(?:(?:[ \u3000]?|[ \u3000]?(?:の|または|もしくは)[ \u3000]?){_JA_TOKEN})*+)\s*"
        rf"を\s*(?=[^。、]{{0,20}}?{_JA_OPERATE})"
    ),
    object_marker="を",
    state_check=re.compile(r"確認|ことを確かめ|待ち|待って|見つけ"),
    input_verb=re.compile(r"入力(?!欄)|記入"),
    input_field=re.compile(r"入力欄|欄|フィールド|テキストボックス"),
    generic_suffix=re.compile(rf"(?:の\s*)?(?:{_JA_UI_SUFFIX})$"),
    marked_suffix=re.compile(rf"(?:{_JA_UI_SUFFIX})$"),
    generic_label=re.compile(r"^(?:オプション|方法|手順|ステップ|ケース|例)\s*[0-9０-９]*$"),
    modifier=re.compile(r"^[^「」『』\[\]]{1,30}?(?:用|向け|ごと|専用)の\s*(?=\S)"),
    determiner=re.compile(r"^(?:この|その|あの|該当の|対象の|任意の|目的の)\s*"),
    pronoun=re.compile(r"^(?:それ|これ|あれ|こちら|そちら)$"),
    coordination=re.compile(r"^\s*(?:、|と|や|\+)\s*$"),
    alternative=re.compile(r"\s*(?:または|もしくは|あるいは)\s*"),
    place=re.compile(r"(?:左上|右上|左下|右下|上部|下部|左側|右側|中央|上|下|左|右|横|隣)$"),
    # 「チャネル名： 任意のチャネル名」: a field and the value to give it.
    field_label=re.compile(r"^(?P<label>[^\s：:、。]{1,20}(?:[ \u3000][^\s：:、。]{1,12})?)\s*[：:]\s*\S"),
)

# One word of an English object (a bold or quoted label counts as one), and the words
# that end an object.
_EN_TOKEN = r"(?:\*\*[^*\n]{1,60}\*\*|“[^”\n]{1,60}”|\"[^\"\n]{1,60}\"|\.?[\w&'’/\\-]++(?:\.[\w&'’/\\-]++)*+)"  # noqa: S105 - a pattern, not a password
_EN_STOP = (
    r"(?:to|for|in|on|at|from|with|by|and|or|so|as|that|which|who|until|before|after|when|if|then|"
    r"but|into|onto|over|under|via|of|again|first|it|them|this|that|simultaneously|immediately|"
    r"briefly|down|up|out|off|back|manually|automatically|about|you|we|they|where|what|how|why|"
    r"whether|here|there|close|near|next|below|above|beside|inside|outside|except|like|including|such|"
    r"correctly|properly|is|are|was|were|be|has|have|should|will|can|may|must)"
)

_EN_UI_SUFFIX = (
    r"buttons?|tabs?|menus?|fields?|text ?box(?:es)?|box(?:es)?|icons?|tiles?|apps?|links?|folders?|"
    r"pages?|screens?|panes?|dialog(?: box)?|windows?|check ?box(?:es)?|toggles?|"
    r"slider switch|slider|switch|drop-?down(?: list)?"
)

#: A condition opening a sentence, up to its comma (or "then", or the verb that follows
#: it when there is no comma); "For more information" and the like open none.
EN_CONDITION = re.compile(
    r"^(?P<cond>(?:If|When|Whenever|Once|Unless|After|Before|While|In case|In (?:the|an) event|"
    r"For(?! (?:more|further|example|instance|details|information|help|a list|the full|now|this|that|"
    r"these|those|each|all|every|best|security|reference)\b))\b"
    # "then" closes the condition ("If it fails then restart"), not "since then".
    r"[^.;:!?]{2,200}?)(?:,|:|(?<!since )\bthen\b|(?=[.!?]?\s*$))",
    re.IGNORECASE,
)

#: What the system does or shows.
EN_RESULT = re.compile(
    r"\b(?:will(?! (?:need|have) to)|"
    r"should (?:start|display|appear|see|show|receive|restart|open|now|be able)|"
    r"you(?:'ll| will) (?:see|be)|is displayed|are displayed|is shown|are shown|appears?|"
    r"opens?|begins?|starts? (?:up|to)|lights? up|restarts?|shows? up|shows|displays|indicates?|"
    r"persists?|launch(?:es)?|turns? (?:on|off)|is (?:created|added|saved|installed|removed|applied|"
    r"updated|enabled|disabled|deployed|restored)|are (?:created|added|saved|installed|removed))\b",
    re.IGNORECASE,
)

#: Words before a label that operate it.
EN_OPERATE_BEFORE = re.compile(
    r"\b(?:select|selecting|click|clicking|tap|choose|open|go to|navigate to|turn on|turn off|enable|"
    r"disable|toggle|enter|type|set|change|move|browse to|copy|check|uncheck|pick|press|hold|hold down|"
    r"press and hold|press and release|release|tap|going to|navigating to|selecting|opening)"
    r"\s+(?:the\s+|on\s+|your\s+|its\s+)?$",
    re.IGNORECASE,
)

#: A verb where a condition written without a comma gives way to the action.
EN_ACTION_VERB = re.compile(rf"\s(?P<verb>please|{_EN_VERBS})\b", re.IGNORECASE)

ENGLISH_STEP_WORDS = StepWords(
    # A delay is not a condition: "After 1 second, all five LEDs…".
    not_condition=re.compile(
        r"^(?:After|In|Within)\s+(?:\d+|a few|about \d+|one|two|three|five|ten)\s+"
        r"(?:seconds?|minutes?|hours?|days?)$",
        re.IGNORECASE,
    ),
    # "Select Yes when prompted", "…, if it is necessary": a condition closing a clause.
    trailing_condition=re.compile(
        r"(?:,\s*|\s+)(?P<cond>(?:if|when|whenever|unless|once)\b(?! to\b)[^,;.!?]{2,160}?)"
        r"(?=(?:[.!?](?:\*\*)?)?\s*$|,\s)",
    ),
    purpose=re.compile(
        rf"^(?P<purpose>To\s+(?!be\b)[a-z][\w-]*\b[^,.;:!?]{{0,120}}?(?:,\s*|\s+(?={_EN_VERBS}\b))"
        r"|It is (?:important|recommended|necessary|required) (?:that you|to)\s+)",
    ),
    # Note: / Important: / Caution: / Warning: / Note that / Also note that are dropped;
    # However, is part of the sentence.
    note_opener=re.compile(
        r"^\s*(?:(?P<label>(?:\*\*)?(?:Note|Notes|Notice|Important|Caution|Warning|Attention)(?:\*\*)?\s*[:：]"
        r"(?:\*\*)?\s*|(?:Also |Please )?note that\s+)|(?=However,))",
        re.IGNORECASE,
    ),
    instruction=re.compile(
        r"^(?:(?:then|also|next|now|finally|first|optionally|alternatively|briefly|just|simply|again|"
        r"or|and|only|incorrectly|manually|carefully|quickly)\b,?\s+)*"
        r"(?:(?:in|on|under|from|at|within|inside|using|with|via|by|after|before|while|without|during)\b"
        r"[^,]{1,80},\s*)?"
        r"(?:please\s+)?(?:you\s+(?:can|must|should|need\s+to|have\s+to|will\s+(?:need|have)\s+to)\s+)?"
        rf"(?:(?:\*\*)?{_EN_VERBS}\b)",
        re.IGNORECASE,
    ),
    statement=NEVER,
    modal=re.compile(
        r"^(?:[^,]{1,80},\s*)?(?:you\s+(?:can|may|might|could)\b|it is (?:also )?possible)", re.IGNORECASE
    ),
    continuation=re.compile(r""),  # English instructs at the start: the instruction rule says it
    operates=NEVER,
    act_then_result=NEVER,
    aside_reference=re.compile(
        r"\s*\((?:see|refer to|for (?:more|details|information))\b[^()]*\)\s*(?=[.]?\s*$)", re.IGNORECASE
    ),
    # The noun phrase an operating verb takes: up to four words, stopping at a preposition,
    # a conjunction, punctuation or a clause.
    object_np=re.compile(
        # Not in a purpose clause ("Select Build to start building…"), but after "have to".
        rf"(?<!(?<!have )(?<!need )\bto )\b(?:{_EN_OPERATE}|applying|selecting|creating)\s+"
        r"(?:(?:the|a|an|your|its|their|this|these|those|all|any|each|some)\s+)?"
        r"(?-i:[a-z]+(?:ly|ed)\s+)*"  # "the previously saved PPKG file": modifiers stay out
        rf"(?P<np>(?!{_EN_STOP}\b)(?!(?-i:[a-z]+ly)\b){_EN_TOKEN}(?:\s+(?!{_EN_STOP}\b){_EN_TOKEN}){{0,4}})",
        re.IGNORECASE,
    ),
    state_check=re.compile(
        r"\b(?:make sure|ensure|verify|confirm|check that|check whether|wait|look for|note|see)\b",
        re.IGNORECASE,
    ),
    input_verb=re.compile(r"\b(?:enter|type|fill in|input)\b", re.IGNORECASE),
    input_field=re.compile(r"\b(?:field|box|text ?box)\b", re.IGNORECASE),
    # Lower case only: "the Save button", but the label "Install App" is a name.
    generic_suffix=re.compile(rf"\s+(?:{_EN_UI_SUFFIX})$"),
    marked_suffix=NEVER,
    generic_label=re.compile(r"^(?:Option|Method|Step|Case|Example|Scenario|Part)\s*\d*$", re.IGNORECASE),
    modifier=NEVER,
    determiner=re.compile(
        r"^(?:the|a|an|your|its|their|this|that|these|those|in|on|under|from|at|to|into|with|by)\s+",
        re.IGNORECASE,
    ),
    pronoun=re.compile(r"^(?:it|them|this|that|these|those|one|everything|something)$", re.IGNORECASE),
    coordination=re.compile(r"^\s*(?:,|and|or|\+)\s*(?:the\s+)?$", re.IGNORECASE),
    alternative=re.compile(r"\s+or\s+(?=(?:your|the|a|an|its)\b)", re.IGNORECASE),
    place=re.compile(r"\b(?:top|bottom|left|right|upper|lower|corner|side)$", re.IGNORECASE),
    field_label=re.compile(r"^(?P<label>[A-Z][\w -]{0,30}?)\s*:\s+\S"),
    instruction_outranks_result=True,
)

#: Step words for a lexicon that has none: every rule off.
_PATTERNS: dict[str, re.Pattern[str]] = {
    f.name: NEVER for f in fields(StepWords) if f.type == "re.Pattern[str]"
}
NO_STEP_WORDS = StepWords(**_PATTERNS)  # type: ignore[arg-type]  # every pattern field, by name
