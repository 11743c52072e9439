"""Chinese phrasing of the dated dev set, part two: dated events, people met through a relation (two-session
questions), values that change and the words for relative dates (data only, `relative` is pure)."""

from datetime import date

__all__ = ["BRIDGES", "EVENTS", "LATEST", "ORDER", "relative"]

NUMBERS = {2: "两", 3: "三", 4: "四", 5: "五", 6: "六"}


def relative(kind: str, day: date, n: int = 0) -> str:
    """Words for a window a question names: relative to the time asked, or a day or month by name."""
    if kind == "yesterday":
        return "昨天"
    if kind == "days_ago":
        return f"{NUMBERS[n]}天前"
    if kind == "last_week":
        return "上周"
    if kind == "last_month":
        return "上个月"
    if kind == "on_day":
        return f"{day.month}月{day.day}日"
    return f"{day.month}月份"


# Events: `say` on the day, `when` asks for that day, `what` asks what happened in a window ({rel}).
EVENTS = [
    {
        "slots": {"band": ["银谷乐队", "夜渡乐队", "海洋静电", "杜松之王"]},
        "say": ["今晚去看了{band}的现场，耳朵还在嗡嗡响。", "今晚在体育馆听了{band}，歌单太棒了！"],
        "when": ["我是哪天去看{band}演出的？", "我什么时候去听的{band}？"],
        "what": ["我{rel}看了哪个乐队的现场？", "我{rel}去了谁的演出？"],
        "act": "听{band}",
        "noise": "夏季音乐节的票几分钟就卖光了。",
    },
    {
        "slots": {
            "race": ["半程马拉松", "越野赛", "慈善十公里", "环港跑"],
            "city": ["波尔图", "厦门", "根特", "卑尔根"],
        },
        "say": ["今天早上冲过了{city}{race}的终点！", "完赛！{city}的{race}差点要了我的命，但我坚持下来了。"],
        "when": ["我是什么时候在{city}跑的{race}？", "我哪天参加的{city}{race}？"],
        "what": ["我{rel}完成了哪项跑步赛事？", "我{rel}参加了什么比赛？"],
        "act": "跑{race}",
        "noise": "我的跑鞋快散架了，下次比赛前得买双新的。",
    },
    {
        "slots": {"show": ["北斋版画展", "包豪斯回顾展", "恐龙馆", "弗里达特展"]},
        "say": ["下午一直在看{show}，我能待上好几个小时。", "今天终于在博物馆看到了{show}，排队也值了。"],
        "when": ["我什么时候去看的{show}？", "我是哪天去的{show}？"],
        "what": ["我{rel}去看了哪个展览？", "我{rel}在博物馆看了什么？"],
        "act": "看{show}",
        "noise": "博物馆的咖啡厅是喝咖啡最安静的地方。",
    },
    {
        "slots": {"cake": ["柠檬蛋糕", "胡萝卜蛋糕", "巧克力挞", "芝士蛋糕", "苹果派"]},
        "say": [
            "今天为同事的欢送会烤了{cake}，几分钟就被吃光了。",
            "今天下午从头做了一个{cake}，厨房一片狼藉。",
        ],
        "when": ["我是哪天烤的{cake}？", "我什么时候做的那个{cake}？"],
        "what": ["我{rel}烤了什么？", "我{rel}用烤箱做了什么？"],
        "act": "烤{cake}",
        "noise": "烤箱又发出奇怪的咔哒声了。",
    },
    {
        "slots": {"peak": ["泰山", "黄山", "峨眉山", "华山", "武功山"]},
        "say": ["刚从{peak}下来，腿都软了。", "中午登上了{peak}山顶，风景美得不真实。"],
        "when": ["我是什么时候爬的{peak}？", "我哪天登的{peak}？"],
        "what": ["我{rel}爬了哪座山？", "我{rel}登顶了哪里？"],
        "act": "爬{peak}",
        "noise": "上次徒步的登山鞋到现在还有泥味。",
    },
    {
        "slots": {"place": ["狼屋餐厅", "锡壶小馆", "樱花屋", "小泡芙", "橄榄与灰"]},
        "say": ["今晚在{place}吃的晚饭，品鉴菜单太惊艳了。", "我们今晚终于订到了{place}的位子。"],
        "when": ["我是哪天在{place}吃饭的？", "我们什么时候去的{place}？"],
        "what": ["我{rel}去了哪家餐厅？", "我{rel}在外面哪儿吃的饭？"],
        "act": "在{place}吃饭",
        "noise": "这附近的餐厅最近涨价涨得厉害。",
    },
]
ORDER = ["{a}和{b}，哪个在先？", "我是先{a}还是先{b}？", "{a}是在{b}之前吗？"]
# Two-session questions: a relative named in one session, a new fact about them (by name) in another.
BRIDGES = {
    "relations": ["姐姐", "哥哥", "表妹", "邻居", "闺蜜", "室友", "叔叔", "姑姑"],
    "names": ["小琳", "马可", "阿依莎", "约纳斯", "惠子", "鲁本", "苔丝", "维克多", "娜迪亚", "菲利克斯"],
    "intro": [
        "我{rel}{name}今晚来家里吃饭了。",
        "帮我{rel}{name}装了一下午衣柜。",
        "{name}是我{rel}，好久没聊了，今天打了很久的电话。",
    ],
    "noise": ["我{rel}总在凌晨两点给我发表情包。", "我还欠我{rel}一张生日贺卡。"],
    "facts": [
        {
            "slots": {"city": ["里斯本", "蒙特利尔", "河内", "塔林", "塞维利亚"]},
            "say": ["{name}决定明年春天定居{city}。", "{name}有大消息：在{city}租了房，合同都签了。"],
            "ask": ["我{rel}要搬去哪个城市？", "我{rel}很快要在哪儿生活？"],
            "answer": "{city}",
        },
        {
            "slots": {"job": ["急救员", "侍酒师", "税务律师", "小学老师", "游戏设计师"]},
            "say": ["{name}刚被录用当{job}，真了不起。", "{name}辞了银行的工作，转行做{job}。"],
            "ask": ["我{rel}现在做什么工作？", "我{rel}的新职业是什么？"],
            "answer": "{job}",
        },
        {
            "slots": {"animal": ["刺猬", "一对雪貂", "陆龟", "哈士奇", "凤头鹦鹉"]},
            "say": ["{name}昨天带回家一只{animal}，一团乱。", "{name}现在和一只{animal}住在一起。"],
            "ask": ["我{rel}养了什么宠物？", "现在哪种动物和我{rel}一起生活？"],
            "answer": "{animal}",
        },
        {
            "slots": {"hobby": ["攀岩", "陶艺", "萨尔萨舞", "养蜂", "帆船"]},
            "say": ["{name}迷上了{hobby}，每个周末都去。", "{name}报了{hobby}班，天天挂在嘴边。"],
            "ask": ["我{rel}最近的新爱好是什么？", "我{rel}空闲时间都在干嘛？"],
            "answer": "{hobby}",
        },
    ],
}
# Values that change: `first` tells the first, `then` each later one; only the last is the evidence.
LATEST = [
    {
        "values": ["滨江", "老城区", "港区", "北门", "山景"],
        "first": ["今天在{v}签了一套公寓的租约。"],
        "then": ["我们又搬家了，现在住在{v}。", "在{v}的新家拆箱子，终于安顿了！"],
        "ask": ["我现在住在哪个片区？", "我目前的家在哪儿？"],
    },
    {
        "values": ["骑自行车", "坐有轨电车", "开车", "走路", "骑电动滑板车"],
        "first": ["最近我{v}去办公室，大概二十分钟。"],
        "then": ["换了习惯：现在我{v}去。", "早上上班的新方式：{v}。"],
        "ask": ["我现在怎么去上班？", "我目前的通勤方式是什么？"],
    },
    {
        "values": ["Pixel 7", "iPhone 13", "Fairphone 4", "Galaxy S22", "诺基亚翻盖机"],
        "first": ["我的手机是{v}，电池目前还行。"],
        "then": ["升级了，现在用{v}。", "旧手机掉进水槽了，换成了{v}。"],
        "ask": ["我现在用的是哪款手机？", "我这阵子带的是什么机子？"],
    },
    {
        "values": ["52分钟", "49分钟", "47分钟", "45分钟"],
        "ordered": True,
        "first": ["我十公里的最好成绩目前是{v}。"],
        "then": ["十公里个人新纪录：{v}！", "又快了，十公里跑进了{v}。"],
        "ask": ["我现在十公里最快多少？", "我目前的十公里最佳成绩是多少？"],
    },
    {
        "values": ["《玻璃港》", "《九个安静的房间》", "《风筝田》", "《最后的点灯人》"],
        "first": ["在火车上开始读{v}。"],
        "then": ["上一本弃了，现在{v}读到一半。", "拿起了{v}，根本放不下。"],
        "ask": ["我现在在读什么？", "我床头放的是哪本小说？"],
    },
    {
        "values": ["四", "三", "两", "一"],
        "ordered": True,
        "first": ["我现在一天喝大约{v}杯咖啡，太多了。"],
        "then": ["又减了：现在一天{v}杯。", "咖啡降到每天{v}杯了。"],
        "ask": ["我这阵子每天喝多少咖啡？", "我现在一天喝几杯？"],
    },
    {
        "values": ["排球", "五人制足球", "极限飞盘", "水球", "篮网球"],
        "first": ["我在体育中心加入了一个{v}队。"],
        "then": ["这个赛季换成{v}了，新队伍新队服。", "我现在每周四打{v}。"],
        "ask": ["我现在在打哪项团体运动？", "我目前和队友一起玩什么运动？"],
    },
    {
        "values": ["4500元", "4800元", "5100元", "5400元"],
        "ordered": True,
        "first": ["我们的房租是每月{v}，在这一带还算合理。"],
        "then": ["房东涨价了，现在每月{v}。", "新合同，房租涨到{v}了。"],
        "ask": ["我每个月住房要花多少钱？", "我的公寓月租现在多少？"],
    },
]
