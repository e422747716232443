// The page make-screenshots.sh opens: ODK Web Forms (the Vue component ODK Central uses)
// rendering the XForm named by ?form=...; ?group=N starts the form with the group
// question answered (the default value of its field), as a respondent of group N sees it.
import { createApp, h } from 'vue';
import { OdkWebForm, webFormsPlugin } from '@getodk/web-forms';

const params = new URLSearchParams(location.search);
let formXml = await (await fetch(params.get('form'))).text();
const group = params.get('group');
if (group !== null) {
  formXml = formXml.replace('<group/>', `<group>${Number(group)}</group>`);
}
createApp({
  render: () => h(OdkWebForm, {
    formXml,
    fetchFormAttachment: async () => new Response('', { status: 404 }),
  }),
}).use(webFormsPlugin).mount('#app');
