use std::time::Instant;
use sweepbench::db::Endpoint;
use sweepbench::wire::{Arg, Conn, Login};
use sweepbench::workload::rand::{Rng, C_LEN, PAD_LEN};

fn main() {
    let port: u16 = std::env::var("PORT")
        .map(|p| p.parse().unwrap())
        .unwrap_or(3306);
    let ep = Endpoint::Tcp("127.0.0.1".into(), port);
    let login = Login {
        user: "root",
        password: "",
        db: "sbw",
    };
    let mut c = Conn::connect(&ep, &login, std::time::Duration::from_secs(5)).unwrap();
    let n: u64 = 250_000;
    let create = "CREATE TABLE probe(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB";
    let mut rng = Rng::seeded(1);
    let (mut cb, mut pb) = ([0u8; C_LEN], [0u8; PAD_LEN]);
    for method in std::env::args().skip(1) {
        c.query("DROP TABLE IF EXISTS probe").unwrap();
        c.query(create).unwrap();
        let t0 = Instant::now();
        match method.as_str() {
            "text" => {
                let mut buf = String::new();
                let mut rows = 0;
                for _ in 0..n {
                    rng.fill_digit_groups(&mut cb);
                    rng.fill_digit_groups(&mut pb);
                    let k = rng.uniform(1, n as u32);
                    if rows == 0 {
                        buf.clear();
                        buf.push_str("INSERT INTO probe(k, c, pad) VALUES");
                    } else {
                        buf.push(',');
                    }
                    buf.push_str(&format!(
                        "({k}, '{}', '{}')",
                        std::str::from_utf8(&cb).unwrap(),
                        std::str::from_utf8(&pb).unwrap()
                    ));
                    rows += 1;
                    if buf.len() > 500_000 {
                        c.query(&buf).unwrap();
                        rows = 0;
                    }
                }
                if rows > 0 {
                    c.query(&buf).unwrap();
                }
            }
            m if m.starts_with("ps") => {
                let per: usize = m[2..].parse().unwrap();
                let mut sql = String::from("INSERT INTO probe(k, c, pad) VALUES");
                for i in 0..per {
                    if i > 0 {
                        sql.push(',');
                    }
                    sql.push_str("(?,?,?)");
                }
                let st = c.prepare(&sql).unwrap();
                let mut cs = vec![[0u8; C_LEN]; per];
                let mut ps = vec![[0u8; PAD_LEN]; per];
                let mut ks = vec![0i64; per];
                for _ in 0..(n as usize / per) {
                    for i in 0..per {
                        rng.fill_digit_groups(&mut cs[i]);
                        rng.fill_digit_groups(&mut ps[i]);
                        ks[i] = rng.uniform(1, n as u32) as i64;
                    }
                    let mut args = Vec::with_capacity(per * 3);
                    for i in 0..per {
                        args.push(Arg::Int(ks[i]));
                        args.push(Arg::Str(&cs[i]));
                        args.push(Arg::Str(&ps[i]));
                    }
                    c.execute(&st, &args).unwrap();
                }
            }
            _ => panic!("method"),
        }
        let load = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        c.query("CREATE INDEX k_1 ON probe(k)").unwrap();
        println!(
            "{method}: load {load:.2}s ({:.0} rows/s), index {:.2}s",
            n as f64 / load,
            t1.elapsed().as_secs_f64()
        );
    }
}
