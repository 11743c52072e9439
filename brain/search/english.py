"""English irregular verbs: a past form to its base form ("bought" to "buy", "ran" to "run"), so that a
memory told in the past tense ("I bought a kayak") meets a question in the present ("what did she buy?"),
which no suffix stemmer does. Forms that are more often another word are left out ("rose", "bit", "ground",
"lay"). Measured on the English dev set (`benchmarks/retrieval.py`, lexical recall@5): 0.766 without, 0.821
with (Snowball either way; Porter gave the same, a light S-stemmer 0.714, no stemming 0.698). Pure data."""

from __future__ import annotations

__all__ = ["IRREGULAR"]

IRREGULAR: dict[str, str] = dict(
    pair.split(":")
    for pair in """
    arisen:arise arose:arise ate:eat awoke:awake awoken:awake beaten:beat became:become began:begin
    begun:begin bent:bend bitten:bite bled:bleed blew:blow blown:blow borne:bear bought:buy bred:breed
    broke:break broken:break brought:bring built:build burnt:burn came:come caught:catch chose:choose
    chosen:choose clung:cling crept:creep drank:drink drawn:draw dreamt:dream drew:draw driven:drive
    drove:drive dug:dig eaten:eat fallen:fall fed:feed fell:fall felt:feel fled:flee flew:fly flown:fly
    forbade:forbid forbidden:forbid forgave:forgive forgiven:forgive forgot:forget forgotten:forget
    fought:fight found:find froze:freeze frozen:freeze gave:give given:give gone:go got:get gotten:get
    grew:grow grown:grow heard:hear held:hold hid:hide hidden:hide hung:hang kept:keep knelt:kneel
    knew:know known:know laid:lay leant:lean leapt:leap learnt:learn led:lead left:leave lent:lend
    lost:lose made:make meant:mean met:meet mistaken:mistake mistook:mistake overcame:overcome paid:pay
    proved:prove proven:prove ran:run rang:ring ridden:ride risen:rise rode:ride rung:ring said:say
    sang:sing sank:sink sat:sit saw:see seen:see sent:send sewed:sew sewn:sew shaken:shake shone:shine
    shook:shake shot:shoot showed:show shown:show shrank:shrink shrunk:shrink slept:sleep slid:slide
    sold:sell sought:seek spat:spit sped:speed spent:spend spilt:spill spoke:speak spoken:speak
    sprang:spring sprung:spring spun:spin stank:stink stole:steal stolen:steal stood:stand
    stridden:stride strode:stride struck:strike strung:string stuck:stick stung:sting stunk:stink
    sung:sing sunk:sink swam:swim swept:sweep swore:swear sworn:swear swum:swim swung:swing taken:take
    taught:teach thought:think threw:throw thrown:throw told:tell took:take tore:tear torn:tear
    understood:understand went:go wept:weep withdrawn:withdraw withdrew:withdraw woke:wake woken:wake
    won:win wore:wear worn:wear wove:weave woven:weave written:write wrote:write
""".split()
)
