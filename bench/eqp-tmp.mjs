import Database from 'better-sqlite3';
const db = new Database('/tmp/inproc.db');
const p = db.prepare('select id, team_id, project_id from tasks limit 1').get();
for (const q of ['select * from "tasks" where ("team_id" = ? and "project_id" = ?) order by "order" asc, "id" asc limit ?', 'select * from tasks where team_id = ? and project_id = ? order by "order", id limit 51']) {
  console.log(db.prepare('explain query plan ' + q).all(...(q.includes('limit ?') ? [p.team_id, p.project_id, 51] : [p.team_id, p.project_id])));
  const st = db.prepare(q); const t0 = performance.now(); for (let i = 0; i < 200; i++) st.all(...(q.includes('limit ?') ? [p.team_id, p.project_id, 51] : [p.team_id, p.project_id])); console.log(((performance.now() - t0) / 200 * 1000).toFixed(0), 'us');
}
console.log(db.prepare("select name from sqlite_master where type='index' and tbl_name='tasks'").all().map(r=>r.name).join(' '));
db.prepare('analyze').run();
